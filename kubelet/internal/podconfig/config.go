package podconfig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
	"trireme.dev/api/qos"
)

// Builder builds the CRI configurations of the node's pods: the sandbox's
// and each container's.
type Builder struct {
	// PodLogsDir holds the containers' log files, a directory per pod.
	PodLogsDir string
	// CgroupParent is the parent of pod cgroups ("/kubepods") with the
	// cgroupfs driver; CgroupDriver is cgroupfs or systemd.
	CgroupParent string
	CgroupDriver string
	// ClusterDNS, ClusterDomain and ResolvConf decide pods' DNS.
	ClusterDNS    []string
	ClusterDomain string
	ResolvConf    string
	// HostIPs are the node's addresses, first primary, as the downward
	// API gives them.
	HostIPs []string
	// Client reads the ConfigMaps and Secrets containers take variables
	// from; nil reads none.
	Client kubernetes.Interface
	// Services lists Services for the environment variables of pods with
	// enableServiceLinks; nil gives none.
	Services corelisters.ServiceLister
	// PodDirs gives each pod's directory on the host, where its
	// /etc/hosts and termination-message files are written.
	PodDirs PodDirs
	// Allocatable returns the node's allocatable resources, which the
	// downward API reports for limits a container does not set; nil
	// reports such limits as 0.
	Allocatable func() corev1.ResourceList
}

func (b *Builder) nodeAllocatable() corev1.ResourceList {
	if b.Allocatable == nil {
		return nil
	}
	return b.Allocatable()
}

// PodDirs gives a pod's directory on the host.
type PodDirs interface {
	// PodDir is the directory of the pod with this UID.
	PodDir(uid types.UID) string
}

// PodLogDir is where a pod's container logs live, named as upstream names
// it so that log collectors find it.
func (b *Builder) PodLogDir(pod *corev1.Pod) string {
	return filepath.Join(b.PodLogsDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// SandboxConfig is the CRI configuration of the pod's sandbox, its
// attempt-th (counting from 0): hostname, log directory, labels and
// annotations, cgroup parent, namespaces, security context, sysctls, DNS
// and host ports. It makes the pod's log directory.
func (b *Builder) SandboxConfig(pod *corev1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	if len(hostname) > 63 {
		hostname = strings.TrimRight(hostname[:63], "-.")
	}
	hostNetwork := pod.Spec.HostNetwork
	if hostNetwork {
		// A host-network sandbox shares the node's UTS namespace, where the
		// runtime may not set a hostname (runc refuses): leave it empty, as
		// upstream's kubelet does.
		hostname = ""
	}
	logDir := b.PodLogDir(pod)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("pod log directory: %w", err)
	}
	sc := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Hostname:     hostname,
		LogDirectory: logDir,
		Labels:       sandboxLabels(pod),
		Annotations:  pod.Annotations,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: b.PodCgroup(pod),
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: namespaceOptions(pod),
				Privileged:       anyPrivileged(pod),
			},
			Sysctls: map[string]string{},
		},
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		lsc := sc.Linux.SecurityContext
		if psc.RunAsUser != nil {
			lsc.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
		}
		if psc.RunAsGroup != nil {
			lsc.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
		}
		lsc.SupplementalGroups = psc.SupplementalGroups
		for _, s := range psc.Sysctls {
			sc.Linux.Sysctls[s.Name] = s.Value
		}
	}
	if !hostNetwork {
		dns, err := b.dnsConfig(pod)
		if err != nil {
			return nil, err
		}
		sc.DnsConfig = dns
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			sc.PortMappings = append(sc.PortMappings, &runtimeapi.PortMapping{
				Protocol:      protocol(p.Protocol),
				ContainerPort: p.ContainerPort,
				HostPort:      p.HostPort,
				HostIp:        p.HostIP,
			})
		}
	}
	return sc, nil
}

func protocol(p corev1.Protocol) runtimeapi.Protocol {
	switch p {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

func namespaceOptions(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostPID {
		ns.Pid = runtimeapi.NamespaceMode_NODE
	} else if ptr.Deref(pod.Spec.ShareProcessNamespace, false) {
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	return ns
}

func anyPrivileged(pod *corev1.Pod) bool {
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.SecurityContext != nil && ptr.Deref(c.SecurityContext.Privileged, false) {
			return true
		}
	}
	return false
}

// PodCgroup is the pod's cgroup under its QoS class's, as upstream lays
// them out: /kubepods/burstable/pod<uid> with the cgroupfs driver,
// kubepods-burstable-pod<uid>.slice with systemd's.
func (b *Builder) PodCgroup(pod *corev1.Pod) string {
	qos := ""
	switch QOSClass(pod) {
	case corev1.PodQOSBurstable:
		qos = "burstable"
	case corev1.PodQOSBestEffort:
		qos = "besteffort"
	}
	if b.CgroupDriver == "systemd" {
		name := "kubepods"
		if qos != "" {
			name += "-" + qos
		}
		return name + "-pod" + strings.ReplaceAll(string(pod.UID), "-", "_") + ".slice"
	}
	parent := b.CgroupParent
	if qos != "" {
		parent += "/" + qos
	}
	return parent + "/pod" + string(pod.UID)
}

// QOSClass is the pod's quality of service class: the one the API server
// recorded, or computed as it computes it.
func QOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return qos.PodQOSClass(pod)
}

// dnsConfig follows dnsPolicy: ClusterFirst uses the cluster DNS (the
// host's resolver when none is configured), Default the host's, None only
// dnsConfig.
func (b *Builder) dnsConfig(pod *corev1.Pod) (*runtimeapi.DNSConfig, error) {
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	cfg := &runtimeapi.DNSConfig{}
	hostCfg := func() error {
		if b.ResolvConf == "" {
			return nil
		}
		data, err := os.ReadFile(b.ResolvConf)
		if err != nil {
			return fmt.Errorf("read resolver config: %w", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "nameserver":
				cfg.Servers = append(cfg.Servers, f[1])
			case "search":
				cfg.Searches = append(cfg.Searches, f[1:]...)
			case "options":
				cfg.Options = append(cfg.Options, f[1:]...)
			}
		}
		return nil
	}
	switch policy {
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		if len(b.ClusterDNS) == 0 {
			if err := hostCfg(); err != nil {
				return nil, err
			}
			break
		}
		domain := b.ClusterDomain
		if domain == "" {
			domain = "cluster.local"
		}
		cfg.Servers = append(cfg.Servers, b.ClusterDNS...)
		cfg.Searches = []string{pod.Namespace + ".svc." + domain, "svc." + domain, domain}
		cfg.Options = []string{"ndots:5"}
	case corev1.DNSDefault:
		if err := hostCfg(); err != nil {
			return nil, err
		}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = append(cfg.Servers, dc.Nameservers...)
		cfg.Searches = append(cfg.Searches, dc.Searches...)
		for _, o := range dc.Options {
			if o.Value != nil {
				cfg.Options = append(cfg.Options, o.Name+":"+*o.Value)
			} else {
				cfg.Options = append(cfg.Options, o.Name)
			}
		}
	}
	if len(cfg.Servers) == 0 && len(cfg.Searches) == 0 && len(cfg.Options) == 0 {
		return nil, nil
	}
	return cfg, nil
}

// Container is one instance of a pod's container to configure.
type Container struct {
	// Pod is the container's pod, PodIPs its sandbox's addresses and
	// VolumePaths the host paths of its volumes, by name.
	Pod         *corev1.Pod
	PodIPs      []string
	VolumePaths map[string]string
	// Spec is the container; Type is ContainerTypeInit,
	// ContainerTypeRegular or ContainerTypeEphemeral.
	Spec *corev1.Container
	Type string
	// TargetID is the runtime ID of the container whose process namespace
	// an ephemeral container joins (its targetContainerName); empty for
	// the pod's.
	TargetID string
	// RestartCount counts the container's earlier instances; ImageRef is
	// the image to run, as the runtime resolved it.
	RestartCount int32
	ImageRef     string
}

// ContainerConfig is the CRI configuration of container c: command and
// arguments with $(VAR) expanded, environment, mounts, labels and
// annotations, log path, resources and security context. It makes the
// container's log directory and termination-message file.
func (b *Builder) ContainerConfig(ctx context.Context, c *Container) (*runtimeapi.ContainerConfig, error) {
	pod, spec := c.Pod, c.Spec
	env, err := b.containerEnv(ctx, pod, spec, c.PodIPs)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, e := range env {
		vars[e.Key] = string(e.Value)
	}
	expandEach := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = expand(s, func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
		}
		return out
	}
	logDir := filepath.Join(b.PodLogDir(pod), spec.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("container log directory: %w", err)
	}
	mounts, err := b.mounts(c, vars)
	if err != nil {
		return nil, err
	}
	termPath := spec.TerminationMessagePath
	if termPath == "" {
		termPath = corev1.TerminationMessagePathDefault
	}
	cc := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: spec.Name, Attempt: uint32(c.RestartCount)},
		Image:      &runtimeapi.ImageSpec{Image: c.ImageRef, UserSpecifiedImage: spec.Image},
		Command:    expandEach(spec.Command),
		Args:       expandEach(spec.Args),
		WorkingDir: spec.WorkingDir,
		Envs:       env,
		Mounts:     mounts,
		Labels:     containerLabels(pod, spec.Name, c.Type),
		Annotations: map[string]string{
			annotationRestartCount:             strconv.Itoa(int(c.RestartCount)),
			AnnotationTerminationMessagePath:   termPath,
			AnnotationTerminationMessagePolicy: string(spec.TerminationMessagePolicy),
			annotationGracePeriod:              strconv.FormatInt(ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30), 10),
			AnnotationContainerImage:           spec.Image,
		},
		LogPath:   filepath.Join(spec.Name, fmt.Sprintf("%d.log", c.RestartCount)),
		Stdin:     spec.Stdin,
		StdinOnce: spec.StdinOnce,
		Tty:       spec.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       LinuxResources(spec),
			SecurityContext: securityContext(pod, spec),
		},
	}
	if ns := cc.Linux.SecurityContext.NamespaceOptions; c.TargetID != "" && ns.Pid == runtimeapi.NamespaceMode_CONTAINER {
		// A pod sharing its process namespace (or the host's) already
		// shows the target's processes.
		ns.Pid = runtimeapi.NamespaceMode_TARGET
		ns.TargetId = c.TargetID
	}
	return cc, nil
}

// LinuxResources turns requests and limits into cgroup settings, as
// upstream's kubelet computes them.
func LinuxResources(c *corev1.Container) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000}
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		r.CpuShares = max(2, q.MilliValue()*1024/1000)
	} else if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		r.CpuShares = max(2, q.MilliValue()*1024/1000)
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		r.CpuQuota = max(1000, q.MilliValue()*r.CpuPeriod/1000)
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		r.MemoryLimitInBytes = q.Value()
	}
	return r
}

func securityContext(pod *corev1.Pod, c *corev1.Container) *runtimeapi.LinuxContainerSecurityContext {
	sc := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: namespaceOptions(pod),
		MaskedPaths:      []string{"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"},
		ReadonlyPaths:    []string{"/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
		}
		if psc.RunAsGroup != nil {
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
		}
		sc.SupplementalGroups = append(sc.SupplementalGroups, psc.SupplementalGroups...)
		if psc.FSGroup != nil {
			sc.SupplementalGroups = append(sc.SupplementalGroups, *psc.FSGroup)
		}
		if psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault {
			sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
		}
	}
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *csc.RunAsUser}
		}
		if csc.RunAsGroup != nil {
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: *csc.RunAsGroup}
		}
		sc.Privileged = ptr.Deref(csc.Privileged, false)
		sc.ReadonlyRootfs = ptr.Deref(csc.ReadOnlyRootFilesystem, false)
		if csc.AllowPrivilegeEscalation != nil {
			sc.NoNewPrivs = !*csc.AllowPrivilegeEscalation
		}
		if caps := csc.Capabilities; caps != nil {
			sc.Capabilities = &runtimeapi.Capability{}
			for _, a := range caps.Add {
				sc.Capabilities.AddCapabilities = append(sc.Capabilities.AddCapabilities, capName(a))
			}
			for _, d := range caps.Drop {
				sc.Capabilities.DropCapabilities = append(sc.Capabilities.DropCapabilities, capName(d))
			}
		}
		if csc.SeccompProfile != nil && csc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault {
			sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
		}
	}
	if sc.Privileged {
		sc.MaskedPaths, sc.ReadonlyPaths = nil, nil
	}
	return sc
}

// capName is a capability as CRI names it: without the CAP_ prefix, which
// the runtime adds (containerd turned CAP_NET_ADMIN into CAP_CAP_NET_ADMIN
// and silently ignored it).
func capName(c corev1.Capability) string {
	return strings.TrimPrefix(strings.ToUpper(string(c)), "CAP_")
}

func imageVolume(pod *corev1.Pod, name string) bool {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return pod.Spec.Volumes[i].Image != nil
		}
	}
	return false
}

// mounts are the container's volume mounts plus /etc/hosts and its
// termination-message file; vars are the container's variables, which
// subPathExpr refers to.
func (b *Builder) mounts(in *Container, vars map[string]string) ([]*runtimeapi.Mount, error) {
	pod, c, podIPs := in.Pod, in.Spec, in.PodIPs
	var out []*runtimeapi.Mount
	hasHosts := false
	for _, vm := range c.VolumeMounts {
		host, ok := in.VolumePaths[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume %q of mount %s is not set up", vm.Name, vm.MountPath)
		}
		sub, err := subPath(&vm, vars)
		if err != nil {
			return nil, err
		}
		if sub != "" {
			if host, err = subPathOnHost(host, sub, vm.Name, c.Name); err != nil {
				return nil, err
			}
		}
		if vm.MountPath == "/etc/hosts" {
			hasHosts = true
		}
		// An image volume is read-only whatever the mount says, as upstream.
		readOnly := vm.ReadOnly || imageVolume(pod, vm.Name)
		m := &runtimeapi.Mount{ContainerPath: vm.MountPath, HostPath: host, Readonly: readOnly}
		if vm.MountPropagation != nil {
			switch *vm.MountPropagation {
			case corev1.MountPropagationHostToContainer:
				m.Propagation = runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER
			case corev1.MountPropagationBidirectional:
				m.Propagation = runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL
			}
		}
		out = append(out, m)
	}
	podDir := b.PodDirs.PodDir(pod.UID)
	if !hasHosts && !pod.Spec.HostNetwork && len(podIPs) > 0 {
		path := filepath.Join(podDir, "etc-hosts")
		if err := os.WriteFile(path, etcHosts(pod, podIPs, b.ClusterDomain), 0o644); err != nil {
			return nil, fmt.Errorf("write etc-hosts: %w", err)
		}
		out = append(out, &runtimeapi.Mount{ContainerPath: "/etc/hosts", HostPath: path})
	}
	termDir := filepath.Join(podDir, "containers", c.Name)
	if err := os.MkdirAll(termDir, 0o755); err != nil {
		return nil, fmt.Errorf("termination message directory: %w", err)
	}
	termFile := filepath.Join(termDir, strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.WriteFile(termFile, nil, 0o666); err != nil {
		return nil, fmt.Errorf("termination message file: %w", err)
	}
	// Writable by whichever user the container runs as: the umask took
	// the group's and others' write bits.
	if err := os.Chmod(termFile, 0o666); err != nil {
		return nil, fmt.Errorf("termination message file: %w", err)
	}
	termPath := c.TerminationMessagePath
	if termPath == "" {
		termPath = corev1.TerminationMessagePathDefault
	}
	out = append(out, &runtimeapi.Mount{ContainerPath: termPath, HostPath: termFile})
	return out, nil
}

func etcHosts(pod *corev1.Pod, podIPs []string, domain string) []byte {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	names := hostname
	if pod.Spec.Subdomain != "" {
		if domain == "" {
			domain = "cluster.local"
		}
		names = fmt.Sprintf("%s.%s.%s.svc.%s\t%s", hostname, pod.Spec.Subdomain, pod.Namespace, domain, hostname)
	}
	for _, ip := range podIPs {
		fmt.Fprintf(&b, "%s\t%s\n", ip, names)
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return []byte(b.String())
}
