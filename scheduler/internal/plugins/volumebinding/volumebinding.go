// Package volumebinding is the VolumeBinding plugin: a pod's
// PersistentVolumeClaims must be bound to volumes the node can reach, or,
// for claims of a WaitForFirstConsumer class, the node must have an
// available volume that fits each (or the class must be able to provision
// one there). The chosen volumes are held for the pod in Reserve; PreBind
// writes the bindings (the volume's claimRef, as upstream, or the claim's
// volume.kubernetes.io/selected-node annotation for provisioning) and
// waits until the persistentvolume-binder has bound every claim.
package volumebinding

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	volumehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "VolumeBinding"

// Upstream's reasons.
const (
	ErrReasonBindConflict        = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict        = "node(s) had volume node affinity conflict"
	ErrReasonNotEnoughSpace      = "node(s) did not have enough free storage"
	ErrReasonPVNotExist          = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	ErrReasonUnboundImmediatePVC = "pod has unbound immediate PersistentVolumeClaims"
)

// noProvisioner is the provisioner of classes for static local volumes.
const noProvisioner = "kubernetes.io/no-provisioner"

const stateKey fwk.StateKey = Name

// Plugin implements PreFilter, Filter, Reserve and PreBind.
type Plugin struct {
	h           fwk.Handle
	pvcLister   corelisters.PersistentVolumeClaimLister
	pvLister    corelisters.PersistentVolumeLister
	classLister storagelisters.StorageClassLister
	bindTimeout time.Duration

	mu sync.Mutex
	// assumed maps a volume name to the claim ("ns/name") a reserved pod
	// will bind it to, until PreBind's write shows in the informer or
	// Unreserve drops it.
	assumed map[string]string
}

// New is the plugin's factory.
func New(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	p := &Plugin{h: h, bindTimeout: 600 * time.Second, assumed: map[string]string{}}
	if args, ok := obj.(*configv1.VolumeBindingArgs); ok && args != nil && args.BindTimeoutSeconds != nil {
		p.bindTimeout = time.Duration(*args.BindTimeoutSeconds) * time.Second
	}
	f := h.SharedInformerFactory()
	if f == nil {
		return nil, fmt.Errorf("%s needs an informer factory", Name)
	}
	p.pvcLister = f.Core().V1().PersistentVolumeClaims().Lister()
	p.pvLister = f.Core().V1().PersistentVolumes().Lister()
	p.classLister = f.Storage().V1().StorageClasses().Lister()
	return p, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// binding is one claim's volume on one node: a static volume to bind, or
// nil for a volume to provision.
type binding struct {
	claim *v1.PersistentVolumeClaim
	pv    *v1.PersistentVolume
}

// state is what PreFilter learns about the pod's claims and Filter
// decides per node.
type state struct {
	bound     []*v1.PersistentVolume      // volumes of bound claims
	toBind    []*v1.PersistentVolumeClaim // unbound WaitForFirstConsumer claims
	classes   map[string]*storagev1.StorageClass
	mu        sync.Mutex
	decisions map[string][]binding // node → bindings chosen for toBind
	chosen    []binding            // the reserved node's bindings
}

// Clone implements fwk.StateData; the state is shared across the cycle.
func (s *state) Clone() fwk.StateData { return s }

// PreFilter implements fwk.PreFilterPlugin: pods without claims skip the
// plugin; missing claims, claims bound to missing volumes and unbound
// claims of Immediate classes make the pod unschedulable everywhere. A
// claim already handed to provisioning on a node pins the pod there.
func (p *Plugin) PreFilter(_ context.Context, cs fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	s := &state{classes: map[string]*storagev1.StorageClass{}, decisions: map[string][]binding{}}
	var pinned string
	for _, v := range pod.Spec.Volumes {
		name := claimName(pod, &v)
		if name == "" {
			continue
		}
		pvc, err := p.pvcLister.PersistentVolumeClaims(pod.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q not found", name))
		}
		if err != nil {
			return nil, fwk.AsStatus(fmt.Errorf("get claim %s: %w", name, err))
		}
		if pvc.DeletionTimestamp != nil {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q is being deleted", name))
		}
		if pvc.Spec.VolumeName != "" {
			pv, err := p.pvLister.Get(pvc.Spec.VolumeName)
			if apierrors.IsNotFound(err) {
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonPVNotExist)
			}
			if err != nil {
				return nil, fwk.AsStatus(fmt.Errorf("get volume %s: %w", pvc.Spec.VolumeName, err))
			}
			s.bound = append(s.bound, pv)
			continue
		}
		className := volumehelpers.GetPersistentVolumeClaimClass(pvc)
		class, err := p.classLister.Get(className)
		if err != nil || class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
			// Immediate binding is the persistentvolume-binder's job; the
			// pod waits for it.
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonUnboundImmediatePVC)
		}
		s.classes[className] = class
		if node := pvc.Annotations[volumehelpers.AnnSelectedNode]; node != "" {
			if pinned != "" && pinned != node {
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "claims are being provisioned on different nodes")
			}
			pinned = node
		}
		s.toBind = append(s.toBind, pvc)
	}
	if len(s.bound) == 0 && len(s.toBind) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	cs.Write(stateKey, s)
	if pinned != "" {
		return &fwk.PreFilterResult{NodeNames: sets.New(pinned)}, nil
	}
	return nil, nil
}

// claimName is the claim a volume uses: its PersistentVolumeClaim, or the
// one the ephemeral-volume controller creates for a generic ephemeral
// volume.
func claimName(pod *v1.Pod, v *v1.Volume) string {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName
	case v.Ephemeral != nil:
		return pod.Name + "-" + v.Name
	}
	return ""
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (*Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func getState(cs fwk.CycleState) (*state, error) {
	d, err := cs.Read(stateKey)
	if err != nil {
		return nil, fmt.Errorf("read %s state: %w", Name, err)
	}
	s, ok := d.(*state)
	if !ok {
		return nil, fmt.Errorf("%s state has type %T", Name, d)
	}
	return s, nil
}

// Filter implements fwk.FilterPlugin: bound volumes must allow the node;
// each unbound claim needs a distinct available volume the node can reach
// or a class that provisions in the node's topology.
func (p *Plugin) Filter(_ context.Context, cs fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	s, err := getState(cs)
	if err != nil {
		return fwk.AsStatus(err)
	}
	node := ni.Node()
	for _, pv := range s.bound {
		if err := volumehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonNodeConflict)
		}
	}
	if len(s.toBind) == 0 {
		return nil
	}
	volumes, err := p.pvLister.List(labels.Everything())
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("list volumes: %w", err))
	}
	p.mu.Lock()
	excluded := make(map[string]*v1.PersistentVolume, len(p.assumed))
	for name := range p.assumed {
		excluded[name] = nil
	}
	p.mu.Unlock()
	var bindings []binding
	var reasons []string
	for _, claim := range s.toBind {
		pv, err := volumehelpers.FindMatchingVolume(claim, volumes, node, excluded, false, true)
		if err != nil {
			return fwk.AsStatus(fmt.Errorf("match claim %s/%s: %w", claim.Namespace, claim.Name, err))
		}
		if pv != nil {
			excluded[pv.Name] = pv
			bindings = append(bindings, binding{claim: claim, pv: pv})
			continue
		}
		class := s.classes[volumehelpers.GetPersistentVolumeClaimClass(claim)]
		if class.Provisioner == noProvisioner || !allowedTopology(class, node) {
			reasons = append(reasons, ErrReasonBindConflict)
			break
		}
		bindings = append(bindings, binding{claim: claim})
	}
	if len(reasons) > 0 {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reasons...)
	}
	s.mu.Lock()
	s.decisions[node.Name] = bindings
	s.mu.Unlock()
	return nil
}

// allowedTopology reports whether class may provision on node.
func allowedTopology(class *storagev1.StorageClass, node *v1.Node) bool {
	if len(class.AllowedTopologies) == 0 {
		return true
	}
	for _, term := range class.AllowedTopologies {
		ok := true
		for _, e := range term.MatchLabelExpressions {
			val, has := node.Labels[e.Key]
			found := false
			for _, v := range e.Values {
				found = found || (has && v == val)
			}
			ok = ok && found
		}
		if ok {
			return true
		}
	}
	return false
}

// Reserve implements fwk.ReservePlugin: the node's volumes are held for
// the pod so that no other pod's cycle picks them.
func (p *Plugin) Reserve(_ context.Context, cs fwk.CycleState, _ *v1.Pod, nodeName string) *fwk.Status {
	s, err := getState(cs)
	if err != nil {
		// PreFilter skipped: the pod has no claims.
		return nil
	}
	s.mu.Lock()
	s.chosen = s.decisions[nodeName]
	s.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range s.chosen {
		if b.pv == nil {
			continue
		}
		if other, taken := p.assumed[b.pv.Name]; taken && other != key(b.claim) {
			return fwk.NewStatus(fwk.Unschedulable, ErrReasonBindConflict)
		}
	}
	for _, b := range s.chosen {
		if b.pv != nil {
			p.assumed[b.pv.Name] = key(b.claim)
		}
	}
	return nil
}

// Unreserve implements fwk.ReservePlugin.
func (p *Plugin) Unreserve(_ context.Context, cs fwk.CycleState, _ *v1.Pod, _ string) {
	s, err := getState(cs)
	if err != nil {
		return
	}
	p.release(s.chosen)
}

func (p *Plugin) release(bs []binding) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range bs {
		if b.pv != nil && p.assumed[b.pv.Name] == key(b.claim) {
			delete(p.assumed, b.pv.Name)
		}
	}
}

func key(c *v1.PersistentVolumeClaim) string { return c.Namespace + "/" + c.Name }

// PreBindPreFlight implements fwk.PreBindPlugin: only pods with claims to
// bind need PreBind.
func (p *Plugin) PreBindPreFlight(_ context.Context, cs fwk.CycleState, _ *v1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	s, err := getState(cs)
	if err != nil || len(s.chosen) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return &fwk.PreBindPreFlightResult{AllowParallel: true}, nil
}

// PreBind implements fwk.PreBindPlugin: it writes each binding — the
// volume's claimRef for a static volume, the claim's selected-node
// annotation for one to provision — and waits until the
// persistentvolume-binder has bound every claim, the bind timeout passes
// or the binding cycle is cancelled.
func (p *Plugin) PreBind(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	s, err := getState(cs)
	if err != nil || len(s.chosen) == 0 {
		return nil
	}
	defer p.release(s.chosen)
	log := klog.FromContext(ctx)
	client := p.h.ClientSet()
	for _, b := range s.chosen {
		if b.pv != nil {
			pv, dirty, err := volumehelpers.GetBindVolumeToClaim(b.pv, b.claim)
			if err != nil {
				return fwk.AsStatus(err)
			}
			if dirty {
				if _, err := client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
					return fwk.AsStatus(fmt.Errorf("bind volume %s to claim %s: %w", pv.Name, key(b.claim), err))
				}
			}
			log.V(4).Info("Bound volume to claim", "pod", klog.KObj(pod), "pv", pv.Name, "pvc", key(b.claim), "node", nodeName)
			continue
		}
		if b.claim.Annotations[volumehelpers.AnnSelectedNode] == nodeName {
			continue
		}
		claim := b.claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, volumehelpers.AnnSelectedNode, nodeName)
		if _, err := client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fwk.AsStatus(fmt.Errorf("select node %s for claim %s: %w", nodeName, key(claim), err))
		}
		log.V(4).Info("Selected node for provisioning", "pod", klog.KObj(pod), "pvc", key(claim), "node", nodeName)
	}
	waitCtx, cancel := context.WithTimeout(ctx, p.bindTimeout)
	defer cancel()
	err = wait.PollUntilContextCancel(waitCtx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, b := range s.chosen {
			claim, err := p.pvcLister.PersistentVolumeClaims(b.claim.Namespace).Get(b.claim.Name)
			if err != nil {
				return false, fmt.Errorf("claim %s: %w", key(b.claim), err)
			}
			if claim.DeletionTimestamp != nil {
				return false, fmt.Errorf("claim %s is being deleted", key(b.claim))
			}
			if claim.Spec.VolumeName == "" || claim.Status.Phase != v1.ClaimBound {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("binding volumes of pod %s: %w", klog.KObj(pod), err))
	}
	return nil
}

// EventsToRegister implements fwk.EnqueueExtensions: a claim, volume,
// class or CSI capacity appearing or changing, or a node gaining labels,
// may let the pod's claims bind.
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: p.isSchedulableAfterClaimChange},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.StorageClass, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel | fwk.UpdateNodeTaint}},
		{Event: fwk.ClusterEvent{Resource: fwk.CSINode, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.CSIStorageCapacity, ActionType: fwk.Add | fwk.Update}},
	}, nil
}

// isSchedulableAfterClaimChange queues the pod only for a change to a
// claim it uses.
func (p *Plugin) isSchedulableAfterClaimChange(_ klog.Logger, pod *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	claim, ok := newObj.(*v1.PersistentVolumeClaim)
	if !ok {
		return fwk.Queue, nil
	}
	if claim.Namespace != pod.Namespace {
		return fwk.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		if claimName(pod, &pod.Spec.Volumes[i]) == claim.Name {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}
