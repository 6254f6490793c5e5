// Package nodestatus registers the Node, keeps its status (capacity,
// allocatable, conditions, addresses, images) current, renews its Lease
// in kube-node-lease, and hands the node's pod CIDR to the runtime.
package nodestatus

import (
	"context"
	"encoding/json"
	"fmt"
	ndftypes "k8s.io/component-helpers/nodedeclaredfeatures/types"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/version"
	cri "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	kubeletconfig "trireme.dev/api/config/kubelet"
	"trireme.dev/kubelet/internal/system"
)

// Config is what the node is registered with.
type Config struct {
	NodeName     string
	NodeIPs      []net.IP
	Labels       map[string]string
	Taints       []corev1.Taint
	MaxPods      int32
	KubeReserved map[string]string
	// SystemReserved and EvictionHard are subtracted from capacity.
	SystemReserved map[string]string
	EvictionHard   map[string]string
	Port           int32
	// RootDir's filesystem is the node's ephemeral storage.
	RootDir string
	// UpdateFrequency and ReportFrequency are how often the status is
	// computed, and how often it is written when nothing changed.
	UpdateFrequency time.Duration
	ReportFrequency time.Duration
	// LeaseDuration is the node Lease's duration; it is renewed every
	// quarter of it (10 s for the default 40 s), as upstream.
	LeaseDuration time.Duration
	// MaxImages caps the images listed in the status.
	MaxImages int
	// ProviderID is the node's spec.providerID.
	ProviderID string
	// ExternalCloudProvider registers the node for a cloud-controller-manager
	// (--cloud-provider=external), as upstream's kubelet does: with the
	// uninitialized taint, ProvidedNodeIPs in the provided-node-ip
	// annotation, and its addresses left to the controller once it has set
	// them.
	ExternalCloudProvider bool
	// ProvidedNodeIPs are the addresses given with --node-ip, if any.
	ProvidedNodeIPs []net.IP
	// Pressure reports memory, disk and PID pressure (the eviction
	// manager's); nil means none.
	Pressure func() (memory, disk, pid bool)
}

// Manager keeps the Node and its Lease.
type Manager struct {
	cfg     Config
	client  kubernetes.Interface
	runtime cri.RuntimeService
	images  cri.ImageManagerService
	log     logr.Logger
	machine system.MachineInfo

	mu          sync.Mutex
	lastStatus  *corev1.NodeStatus
	lastWritten time.Time
	podCIDRs    []string
}

// New returns a manager; Run registers the node and keeps it current.
func New(cfg Config, client kubernetes.Interface, runtime cri.RuntimeService, images cri.ImageManagerService, machine system.MachineInfo, log logr.Logger) *Manager {
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = 40 * time.Second
	}
	if cfg.UpdateFrequency == 0 {
		cfg.UpdateFrequency = 10 * time.Second
	}
	if cfg.ReportFrequency == 0 {
		cfg.ReportFrequency = 5 * time.Minute
	}
	return &Manager{cfg: cfg, client: client, runtime: runtime, images: images, machine: machine, log: log}
}

// Run registers the node (retrying until it succeeds), then updates its
// status and renews its lease until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	// A plain loop, not wait.Backoff: a Backoff whose Duration reaches its Cap
	// stops stepping, which gave up registration after ~15 s when the apiserver
	// (a static pod of this very kubelet) took longer to come up.
	delay := 500 * time.Millisecond
	for {
		err := m.register(ctx)
		if err == nil {
			break
		}
		m.log.Error(err, "Register node failed; retrying", "after", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 7*time.Second)
	}
	m.log.Info("Registered node", "node", m.cfg.NodeName)
	go m.watchNode(ctx)
	go wait.UntilWithContext(ctx, m.renewLease, m.cfg.LeaseDuration/4)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := m.syncStatus(ctx); err != nil {
			m.log.Error(err, "Update node status failed")
		}
	}, m.cfg.UpdateFrequency)
	return nil
}

// InitialNode is the Node object the kubelet registers.
func (m *Manager) InitialNode() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:      m.cfg.NodeName,
		corev1.LabelOSStable:      m.machine.OperatingSytem,
		corev1.LabelArchStable:    m.machine.Architecture,
		"beta.kubernetes.io/os":   m.machine.OperatingSytem,
		"beta.kubernetes.io/arch": m.machine.Architecture,
	}
	for k, v := range m.cfg.Labels {
		labels[k] = v
	}
	annotations := map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}
	taints := m.cfg.Taints
	if m.cfg.ExternalCloudProvider {
		taints = append(slices.Clone(taints), corev1.Taint{Key: TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule})
		if v := m.providedNodeIP(); v != "" {
			annotations[AnnotationProvidedNodeIP] = v
		}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        m.cfg.NodeName,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: corev1.NodeSpec{Taints: taints, ProviderID: m.cfg.ProviderID},
	}
}

// Names a node registered for a cloud-controller-manager carries, as
// k8s.io/cloud-provider/api spells them.
const (
	// TaintExternalCloudProvider keeps pods off the node until the
	// cloud-controller-manager has initialized it and removed the taint.
	TaintExternalCloudProvider = "node.cloudprovider.kubernetes.io/uninitialized"
	// AnnotationProvidedNodeIP is --node-ip, for the controller to pick the
	// node's addresses by.
	AnnotationProvidedNodeIP = "alpha.kubernetes.io/provided-node-ip"
)

// providedNodeIP is the provided-node-ip annotation's value: the --node-ip
// addresses, comma-separated.
func (m *Manager) providedNodeIP() string {
	var ips []string
	for _, ip := range m.cfg.ProvidedNodeIPs {
		ips = append(ips, ip.String())
	}
	return strings.Join(ips, ",")
}

func (m *Manager) register(ctx context.Context) error {
	node := m.InitialNode()
	node.Status = m.computeStatus(ctx, nil)
	created, err := m.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		m.observeNode(ctx, created)
		return m.writeStatus(ctx, created, &node.Status)
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node: %w", err)
	}
	existing, err := m.client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get existing node: %w", err)
	}
	// Keep the labels this kubelet owns current on an existing node.
	changed := false
	for k, v := range node.Labels {
		if existing.Labels[k] != v {
			if existing.Labels == nil {
				existing.Labels = map[string]string{}
			}
			existing.Labels[k] = v
			changed = true
		}
	}
	if v, ok := node.Annotations[AnnotationProvidedNodeIP]; ok && existing.Annotations[AnnotationProvidedNodeIP] != v {
		if existing.Annotations == nil {
			existing.Annotations = map[string]string{}
		}
		existing.Annotations[AnnotationProvidedNodeIP] = v
		changed = true
	}
	if changed {
		if existing, err = m.client.CoreV1().Nodes().Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update node labels: %w", err)
		}
	}
	m.observeNode(ctx, existing)
	st := m.computeStatus(ctx, existing)
	return m.writeStatus(ctx, existing, &st)
}

// observeNode passes a newly seen pod CIDR to the runtime, which renders
// its CNI configuration from it.
func (m *Manager) observeNode(ctx context.Context, node *corev1.Node) {
	cidrs := node.Spec.PodCIDRs
	if len(cidrs) == 0 && node.Spec.PodCIDR != "" {
		cidrs = []string{node.Spec.PodCIDR}
	}
	m.mu.Lock()
	same := fmt.Sprint(cidrs) == fmt.Sprint(m.podCIDRs)
	m.mu.Unlock()
	if same || len(cidrs) == 0 {
		return
	}
	err := m.runtime.UpdateRuntimeConfig(ctx, &runtimeapi.RuntimeConfig{NetworkConfig: &runtimeapi.NetworkConfig{PodCidr: cidrs[0]}})
	if err != nil {
		m.log.Error(err, "Pass pod CIDR to the runtime failed", "podCIDR", cidrs[0])
		return
	}
	m.log.Info("Passed pod CIDR to the runtime", "podCIDR", cidrs[0])
	m.mu.Lock()
	m.podCIDRs = cidrs
	m.mu.Unlock()
}

// PodCIDRs returns the pod CIDRs last passed to the runtime.
func (m *Manager) PodCIDRs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.podCIDRs...)
}

func (m *Manager) syncStatus(ctx context.Context) error {
	node, err := m.client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		if apierrors.IsNotFound(err) {
			m.log.Info("Node object deleted; registering again")
			return m.register(ctx)
		}
		return fmt.Errorf("get node: %w", err)
	}
	m.observeNode(ctx, node)
	st := m.computeStatus(ctx, node)
	m.mu.Lock()
	unchanged := m.lastStatus != nil && statusEqual(m.lastStatus, &st) && time.Since(m.lastWritten) < m.cfg.ReportFrequency
	m.mu.Unlock()
	if unchanged {
		return nil
	}
	return m.writeStatus(ctx, node, &st)
}

// statusEqual compares statuses ignoring heartbeat times.
func statusEqual(a, b *corev1.NodeStatus) bool {
	strip := func(s *corev1.NodeStatus) *corev1.NodeStatus {
		c := s.DeepCopy()
		for i := range c.Conditions {
			c.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
		return c
	}
	return apiequality.Semantic.DeepEqual(strip(a), strip(b))
}

func (m *Manager) writeStatus(ctx context.Context, node *corev1.Node, st *corev1.NodeStatus) error {
	body := map[string]any{"status": st}
	if node.ResourceVersion != "" {
		// The patch replaces the conditions with those read from node:
		// a condition another writer added since would be lost, so the
		// write fails on a newer node instead, and the next sync rereads it.
		body["metadata"] = map[string]any{"resourceVersion": node.ResourceVersion}
	}
	patch, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if _, err := m.client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("patch node status: %w", err)
	}
	m.mu.Lock()
	m.lastStatus = st.DeepCopy()
	m.lastWritten = time.Now()
	m.mu.Unlock()
	return nil
}

// Capacity returns the node's capacity: what the machine has.
func (m *Manager) Capacity() corev1.ResourceList {
	storage, err := system.FilesystemCapacity(m.cfg.RootDir)
	if err != nil {
		m.log.Error(err, "Read ephemeral storage capacity failed")
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(m.machine.CPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(m.machine.MemoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(storage, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(m.cfg.MaxPods), resource.DecimalSI),
		"hugepages-2Mi":                 *resource.NewQuantity(m.machine.HugePages2Mi, resource.BinarySI),
		"hugepages-1Gi":                 *resource.NewQuantity(m.machine.HugePages1Gi, resource.BinarySI),
	}
}

// Allocatable is capacity minus kube and system reservations and the
// hard eviction thresholds, as upstream computes it; never negative.
func Allocatable(capacity corev1.ResourceList, kubeReserved, systemReserved, evictionHard map[string]string) corev1.ResourceList {
	alloc := capacity.DeepCopy()
	sub := func(name corev1.ResourceName, q resource.Quantity) {
		v, ok := alloc[name]
		if !ok {
			return
		}
		v.Sub(q)
		if v.Sign() < 0 {
			v = *resource.NewQuantity(0, v.Format)
		}
		alloc[name] = v
	}
	for _, reserved := range []map[string]string{kubeReserved, systemReserved} {
		for k, v := range reserved {
			q, err := resource.ParseQuantity(v)
			if err == nil {
				sub(corev1.ResourceName(k), q)
			}
		}
	}
	for signal, res := range map[string]corev1.ResourceName{"memory.available": corev1.ResourceMemory, "nodefs.available": corev1.ResourceEphemeralStorage} {
		v, ok := evictionHard[signal]
		if !ok {
			continue
		}
		th, err := kubeletconfig.ParseThreshold(v)
		if err != nil {
			continue
		}
		if th.Quantity != nil {
			sub(res, *th.Quantity)
		} else if c, ok := capacity[res]; ok {
			sub(res, *resource.NewQuantity(int64(float64(c.Value())*th.Percent/100), resource.BinarySI))
		}
	}
	return alloc
}

// NodeAllocatable returns the node's allocatable resources: as last
// written to its status, or computed now before the first write.
func (m *Manager) NodeAllocatable() corev1.ResourceList {
	m.mu.Lock()
	last := m.lastStatus
	m.mu.Unlock()
	if last != nil && last.Allocatable != nil {
		return last.Allocatable.DeepCopy()
	}
	return Allocatable(m.Capacity(), m.cfg.KubeReserved, m.cfg.SystemReserved, m.cfg.EvictionHard)
}

func (m *Manager) computeStatus(ctx context.Context, node *corev1.Node) corev1.NodeStatus {
	now := metav1.Now()
	capacity := m.Capacity()
	st := corev1.NodeStatus{
		Capacity:        capacity,
		Allocatable:     Allocatable(capacity, m.cfg.KubeReserved, m.cfg.SystemReserved, m.cfg.EvictionHard),
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: m.cfg.Port}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:       m.machine.MachineID,
			SystemUUID:      m.machine.SystemUUID,
			BootID:          m.machine.BootID,
			KernelVersion:   m.machine.KernelVersion,
			OSImage:         m.machine.OSImage,
			OperatingSystem: m.machine.OperatingSytem,
			Architecture:    m.machine.Architecture,
			KubeletVersion:  version.Get().GitVersion,
		},
	}
	if m.cfg.ExternalCloudProvider && node != nil && len(node.Status.Addresses) > 0 {
		// The cloud-controller-manager's addresses win; the kubelet's own
		// are only a start, so that the node is reachable before it runs.
		st.Addresses = slices.Clone(node.Status.Addresses)
	} else {
		for _, ip := range m.cfg.NodeIPs {
			st.Addresses = append(st.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
		}
		st.Addresses = append(st.Addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: m.cfg.NodeName})
	}

	ready, reason, msg := true, "KubeletReady", "kubelet is posting ready status"
	v, err := m.runtime.Version(ctx, "v1")
	if err != nil {
		ready, reason, msg = false, "KubeletNotReady", fmt.Sprintf("container runtime is down: %v", err)
	} else {
		st.NodeInfo.ContainerRuntimeVersion = v.RuntimeName + "://" + v.RuntimeVersion
	}
	if ready {
		rs, err := m.runtime.Status(ctx, false)
		if err != nil {
			ready, reason, msg = false, "KubeletNotReady", fmt.Sprintf("container runtime status check failed: %v", err)
		} else {
			for _, c := range rs.GetStatus().GetConditions() {
				if !c.Status && (c.Type == runtimeapi.RuntimeReady || c.Type == runtimeapi.NetworkReady) {
					ready, reason = false, "KubeletNotReady"
					msg = fmt.Sprintf("container runtime %s is false: %s: %s", c.Type, c.Reason, c.Message)
				}
			}
		}
	}
	st.Images = m.nodeImages(ctx)
	st.DeclaredFeatures = DeclaredFeatures(version.Get().GitVersion, ndftypes.RuntimeFeatures{})

	var old []corev1.NodeCondition
	if node != nil {
		old = node.Status.Conditions
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, o := range old {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		return c
	}
	readyStatus := corev1.ConditionTrue
	if !ready {
		readyStatus = corev1.ConditionFalse
	}
	var memPressure, diskPressure, pidPressure bool
	if m.cfg.Pressure != nil {
		memPressure, diskPressure, pidPressure = m.cfg.Pressure()
	}
	st.Conditions = []corev1.NodeCondition{
		pressureCondition(cond, corev1.NodeMemoryPressure, memPressure,
			"KubeletHasSufficientMemory", "kubelet has sufficient memory available",
			"KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
		pressureCondition(cond, corev1.NodeDiskPressure, diskPressure,
			"KubeletHasNoDiskPressure", "kubelet has no disk pressure",
			"KubeletHasDiskPressure", "kubelet has disk pressure"),
		pressureCondition(cond, corev1.NodePIDPressure, pidPressure,
			"KubeletHasSufficientPID", "kubelet has sufficient PID available",
			"KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
		cond(corev1.NodeReady, readyStatus, reason, msg),
	}
	// Conditions other writers own (a network plugin's NetworkUnavailable, a
	// problem detector's) stay: the status goes as a JSON merge patch, which
	// replaces the whole list.
	st.Conditions = append(st.Conditions, foreignConditions(old)...)
	return st
}

// kubeletConditions are the node conditions the kubelet owns.
var kubeletConditions = map[corev1.NodeConditionType]bool{
	corev1.NodeMemoryPressure: true, corev1.NodeDiskPressure: true, corev1.NodePIDPressure: true, corev1.NodeReady: true,
}

// foreignConditions are the conditions of cs the kubelet does not own.
func foreignConditions(cs []corev1.NodeCondition) []corev1.NodeCondition {
	var out []corev1.NodeCondition
	for _, c := range cs {
		if !kubeletConditions[c.Type] {
			out = append(out, c)
		}
	}
	return out
}

func (m *Manager) nodeImages(ctx context.Context) []corev1.ContainerImage {
	list, err := m.images.ListImages(ctx, nil)
	if err != nil {
		m.log.Error(err, "List images failed")
		return nil
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Size > list[j].Size })
	var out []corev1.ContainerImage
	for _, img := range list {
		if m.cfg.MaxImages > 0 && len(out) >= m.cfg.MaxImages {
			break
		}
		names := append(append([]string(nil), img.RepoDigests...), img.RepoTags...)
		if len(names) == 0 {
			continue
		}
		out = append(out, corev1.ContainerImage{Names: names, SizeBytes: int64(img.Size)})
	}
	return out
}

// renewLease creates or renews the node's Lease in kube-node-lease.
func (m *Manager) renewLease(ctx context.Context) {
	leases := m.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, nerr := m.client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
		if nerr != nil {
			m.log.Error(nerr, "Get node for lease owner failed")
			return
		}
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name: m.cfg.NodeName, Namespace: corev1.NamespaceNodeLease,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
			},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(m.cfg.NodeName),
				LeaseDurationSeconds: ptr.To(int32(m.cfg.LeaseDuration / time.Second)),
				RenewTime:            &now,
			},
		}
		if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			m.log.Error(err, "Create node lease failed")
		}
		return
	}
	if err != nil {
		m.log.Error(err, "Get node lease failed")
		return
	}
	lease.Spec.RenewTime = &now
	lease.Spec.HolderIdentity = ptr.To(m.cfg.NodeName)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(m.cfg.LeaseDuration / time.Second))
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		m.log.Error(err, "Renew node lease failed")
	}
}

// watchNode follows the node object, so a pod CIDR assigned after
// registration reaches the runtime at once rather than at the next status
// update.
func (m *Manager) watchNode(ctx context.Context) {
	lw := cache.NewListWatchFromClient(m.client.CoreV1().RESTClient(), "nodes", metav1.NamespaceAll, fields.OneTermEqualSelector("metadata.name", m.cfg.NodeName))
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Node{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { m.onNode(ctx, obj) },
			UpdateFunc: func(_, obj any) { m.onNode(ctx, obj) },
		},
	})
	ctrl.RunWithContext(ctx)
}

func (m *Manager) onNode(ctx context.Context, obj any) {
	if node, ok := obj.(*corev1.Node); ok {
		m.observeNode(ctx, node)
	}
}

// Addresses returns the node's addresses as last written to its status,
// split into host names and IPs (none before the node is registered): the
// names a kubelet-serving certificate asks for, which the CSR approver
// checks against the same Node.
func (m *Manager) Addresses() (hostnames []string, ips []net.IP) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastStatus == nil {
		return nil, nil
	}
	return SplitAddresses(m.lastStatus.Addresses)
}

// SplitAddresses splits node addresses into DNS names and IPs, each once.
func SplitAddresses(addrs []corev1.NodeAddress) (hostnames []string, ips []net.IP) {
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a.Address] {
			continue
		}
		seen[a.Address] = true
		switch a.Type {
		case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			hostnames = append(hostnames, a.Address)
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip := net.ParseIP(a.Address); ip != nil {
				ips = append(ips, ip)
			}
		}
	}
	return hostnames, ips
}

// pressureCondition is a pressure condition worded as upstream's.
func pressureCondition(cond func(corev1.NodeConditionType, corev1.ConditionStatus, string, string) corev1.NodeCondition,
	t corev1.NodeConditionType, under bool, okReason, okMsg, reason, msg string) corev1.NodeCondition {
	if under {
		return cond(t, corev1.ConditionTrue, reason, msg)
	}
	return cond(t, corev1.ConditionFalse, okReason, okMsg)
}
