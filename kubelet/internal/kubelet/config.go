package kubelet

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func isNotFound(err error) bool {
	return status.Code(err) == codes.NotFound
}

// Static pods carry the config.source annotation of the file source.
const (
	annotationConfigSource = "kubernetes.io/config.source"
	annotationConfigMirror = "kubernetes.io/config.mirror"
)

func isStatic(pod *corev1.Pod) bool {
	s := pod.Annotations[annotationConfigSource]
	return s != "" && s != "api"
}

func sandboxIPs(st *runtimeapi.PodSandboxStatus) []string {
	if st == nil || st.Network == nil || st.Network.Ip == "" {
		return nil
	}
	ips := []string{st.Network.Ip}
	for _, a := range st.Network.AdditionalIps {
		ips = append(ips, a.Ip)
	}
	return ips
}

// podLogDir is where a pod's container logs live, named as upstream names
// it so that log collectors find it.
func (k *Kubelet) podLogDir(pod *corev1.Pod) string {
	return filepath.Join(k.cfg.PodLogsDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

func (k *Kubelet) sandboxConfig(pod *corev1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
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
	logDir := k.podLogDir(pod)
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
			CgroupParent: k.podCgroup(pod),
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
		dns, err := k.dnsConfig(pod)
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

// podCgroup is the pod's cgroup under its QoS class's, as upstream lays
// them out: /kubepods/burstable/pod<uid> with the cgroupfs driver,
// kubepods-burstable-pod<uid>.slice with systemd's.
func (k *Kubelet) podCgroup(pod *corev1.Pod) string {
	qos := ""
	switch QOSClass(pod) {
	case corev1.PodQOSBurstable:
		qos = "burstable"
	case corev1.PodQOSBestEffort:
		qos = "besteffort"
	}
	if k.cfg.CgroupDriver == "systemd" {
		name := "kubepods"
		if qos != "" {
			name += "-" + qos
		}
		return name + "-pod" + strings.ReplaceAll(string(pod.UID), "-", "_") + ".slice"
	}
	parent := k.cfg.CgroupParent
	if qos != "" {
		parent += "/" + qos
	}
	return parent + "/pod" + string(pod.UID)
}

// dnsConfig follows dnsPolicy: ClusterFirst uses the cluster DNS (the
// host's resolver when none is configured), Default the host's, None only
// dnsConfig.
func (k *Kubelet) dnsConfig(pod *corev1.Pod) (*runtimeapi.DNSConfig, error) {
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	cfg := &runtimeapi.DNSConfig{}
	hostCfg := func() error {
		if k.cfg.ResolvConf == "" {
			return nil
		}
		data, err := os.ReadFile(k.cfg.ResolvConf)
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
		if len(k.cfg.ClusterDNS) == 0 {
			if err := hostCfg(); err != nil {
				return nil, err
			}
			break
		}
		domain := k.cfg.ClusterDomain
		if domain == "" {
			domain = "cluster.local"
		}
		cfg.Servers = append(cfg.Servers, k.cfg.ClusterDNS...)
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

// containerConfig is the CRI configuration of container c (of type ctype,
// at restartCount, running imageRef) in the pod s syncs.
func (k *Kubelet) containerConfig(ctx context.Context, s *podSync, c *corev1.Container, ctype string, restartCount int32, imageRef string) (*runtimeapi.ContainerConfig, error) {
	pod, volumePaths := s.pod, s.volumePaths
	env, err := k.containerEnv(ctx, pod, c, s.podIPs)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, e := range env {
		vars[e.Key] = string(e.Value)
	}
	expand := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = Expand(s, func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
		}
		return out
	}
	logDir := filepath.Join(k.podLogDir(pod), c.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("container log directory: %w", err)
	}
	mounts, err := k.mounts(pod, c, volumePaths, s.podIPs)
	if err != nil {
		return nil, err
	}
	termPath := c.TerminationMessagePath
	if termPath == "" {
		termPath = corev1.TerminationMessagePathDefault
	}
	cc := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(restartCount)},
		Image:      &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image},
		Command:    expand(c.Command),
		Args:       expand(c.Args),
		WorkingDir: c.WorkingDir,
		Envs:       env,
		Mounts:     mounts,
		Labels:     containerLabels(pod, c.Name, ctype),
		Annotations: map[string]string{
			annotationRestartCount:   strconv.Itoa(int(restartCount)),
			annotationTermMsgPath:    termPath,
			annotationTermMsgPolicy:  string(c.TerminationMessagePolicy),
			annotationGracePeriod:    strconv.FormatInt(ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30), 10),
			annotationContainerImage: c.Image,
		},
		LogPath:   filepath.Join(c.Name, fmt.Sprintf("%d.log", restartCount)),
		Stdin:     c.Stdin,
		StdinOnce: c.StdinOnce,
		Tty:       c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       linuxResources(c),
			SecurityContext: securityContext(pod, c),
		},
	}
	return cc, nil
}

// linuxResources turns requests and limits into cgroup settings, as
// upstream's kubelet computes them.
func linuxResources(c *corev1.Container) *runtimeapi.LinuxContainerResources {
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

func capName(c corev1.Capability) string {
	s := strings.ToUpper(string(c))
	if s == "ALL" || strings.HasPrefix(s, "CAP_") {
		return s
	}
	return "CAP_" + s
}

// mounts are the container's volume mounts plus /etc/hosts and its
// termination-message file.
func (k *Kubelet) mounts(pod *corev1.Pod, c *corev1.Container, volumePaths map[string]string, podIPs []string) ([]*runtimeapi.Mount, error) {
	var out []*runtimeapi.Mount
	hasHosts := false
	for _, vm := range c.VolumeMounts {
		host, ok := volumePaths[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume %q of mount %s is not set up", vm.Name, vm.MountPath)
		}
		if vm.SubPath != "" {
			host = filepath.Join(host, filepath.Clean("/"+vm.SubPath))
		}
		if vm.MountPath == "/etc/hosts" {
			hasHosts = true
		}
		m := &runtimeapi.Mount{ContainerPath: vm.MountPath, HostPath: host, Readonly: vm.ReadOnly}
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
	podDir := k.cfg.Volumes.PodDir(pod.UID)
	if !hasHosts && !pod.Spec.HostNetwork && len(podIPs) > 0 {
		path := filepath.Join(podDir, "etc-hosts")
		if err := os.WriteFile(path, etcHosts(pod, podIPs, k.cfg.ClusterDomain), 0o644); err != nil {
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

// runHook runs a lifecycle handler (exec, httpGet or sleep) within
// timeout.
func (k *Kubelet) runHook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id string, h *corev1.LifecycleHandler, timeout time.Duration, podIPs []string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case h.Exec != nil:
		stdout, stderr, err := k.cfg.Runtime.ExecSync(ctx, id, h.Exec.Command, timeout)
		if err != nil {
			return fmt.Errorf("exec %v: %w (output %q)", h.Exec.Command, err, string(stdout)+string(stderr))
		}
		return nil
	case h.HTTPGet != nil:
		host := h.HTTPGet.Host
		if host == "" {
			if len(podIPs) == 0 {
				podIPs = podIPsOf(pod)
			}
			if len(podIPs) == 0 {
				return fmt.Errorf("httpGet hook: pod has no IP")
			}
			host = podIPs[0]
		}
		port, err := resolvePort(h.HTTPGet.Port, c)
		if err != nil {
			return err
		}
		scheme := strings.ToLower(string(h.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), h.HTTPGet.Path)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("httpGet hook %s: %w", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			return fmt.Errorf("httpGet hook %s: status %d", url, resp.StatusCode)
		}
		return nil
	case h.Sleep != nil:
		select {
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
		case <-ctx.Done():
		}
		return nil
	}
	return nil
}

func podIPsOf(pod *corev1.Pod) []string {
	var out []string
	for _, ip := range pod.Status.PodIPs {
		out = append(out, ip.IP)
	}
	return out
}

// resolvePort turns a port number or container port name into a number.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if n := p.IntValue(); n > 0 {
		return n, nil
	}
	name := p.String()
	if c != nil {
		for _, cp := range c.Ports {
			if cp.Name == name {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("port %q not found", name)
}

// serviceEnv returns the docker-link-style variables of the Services
// visible to the pod, as upstream's kubelet sets them.
func (k *Kubelet) serviceEnv(pod *corev1.Pod) []*runtimeapi.KeyValue {
	if k.cfg.Services == nil {
		return nil
	}
	links := ptr.Deref(pod.Spec.EnableServiceLinks, true)
	services, err := k.cfg.Services.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*runtimeapi.KeyValue
	for _, s := range services {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		master := s.Namespace == "default" && s.Name == "kubernetes"
		if !(master || (links && s.Namespace == pod.Namespace)) {
			continue
		}
		out = append(out, serviceVars(s)...)
	}
	return out
}

func serviceVars(s *corev1.Service) []*runtimeapi.KeyValue {
	if len(s.Spec.Ports) == 0 {
		return nil
	}
	name := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
	ip := s.Spec.ClusterIP
	p0 := s.Spec.Ports[0]
	out := []*runtimeapi.KeyValue{
		{Key: name + "_SERVICE_HOST", Value: bv(ip)},
		{Key: name + "_SERVICE_PORT", Value: bv(strconv.Itoa(int(p0.Port)))},
		{Key: name + "_PORT", Value: bv(fmt.Sprintf("%s://%s", strings.ToLower(string(p0.Protocol)), net.JoinHostPort(ip, strconv.Itoa(int(p0.Port)))))},
	}
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			out = append(out, &runtimeapi.KeyValue{Key: name + "_SERVICE_PORT_" + strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_")), Value: bv(strconv.Itoa(int(p.Port)))})
		}
		proto := strings.ToLower(string(p.Protocol))
		prefix := fmt.Sprintf("%s_PORT_%d_%s", name, p.Port, strings.ToUpper(proto))
		out = append(out,
			&runtimeapi.KeyValue{Key: prefix, Value: bv(fmt.Sprintf("%s://%s", proto, net.JoinHostPort(ip, strconv.Itoa(int(p.Port)))))},
			&runtimeapi.KeyValue{Key: prefix + "_PROTO", Value: bv(proto)},
			&runtimeapi.KeyValue{Key: prefix + "_PORT", Value: bv(strconv.Itoa(int(p.Port)))},
			&runtimeapi.KeyValue{Key: prefix + "_ADDR", Value: bv(ip)},
		)
	}
	return out
}

var _ = types.UID("")

// bv is a CRI KeyValue's value.
func bv(s string) []byte { return []byte(s) }
