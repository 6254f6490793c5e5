// Package staticpod writes the control plane's static pod manifests — etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler — as kubeadm lays them
// out: host network, system-node-critical, hostPath mounts of the certificates and
// kubeconfigs, and liveness and startup probes on each component's health endpoint.
// Every flag name is one the Trireme binary accepts (or upstream's, where the
// Trireme component is still growing it); ClusterConfiguration extraArgs override
// them.
package staticpod

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/options"
	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/vip"
)

// Component names: pod names and manifest file names (<name>.yaml).
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	// VIPManager holds the control plane's virtual IP (ClusterConfiguration.virtualIP).
	VIPManager = "trireme-vip"
	// CloudControllerManager runs with ClusterConfiguration.cloudProvider "external".
	CloudControllerManager = "cloud-controller-manager"
	// EtcdSnapshot snapshots the local etcd member on the schedule of
	// ClusterConfiguration.etcd.local.snapshots.
	EtcdSnapshot = "etcd-snapshot"
)

// ControlPlane lists the control-plane components in start order (after etcd).
var ControlPlane = []string{APIServer, ControllerManager, Scheduler}

// Images maps each component to its Trireme image name (trireme.dev/<image>:<version>)
// and the binary's path in that image.
var Images = map[string]struct{ Image, Binary string }{
	Etcd:                   {"etcd", "/usr/local/bin/etcd"},
	EtcdSnapshot:           {"etcd", "/usr/local/bin/trireme-etcd-snapshot"},
	APIServer:              {"trireme-apiserver", "/usr/local/bin/trireme-apiserver"},
	ControllerManager:      {"trireme-controller-manager", "/usr/local/bin/trireme-controller-manager"},
	Scheduler:              {"trireme-scheduler", "/usr/local/bin/trireme-scheduler"},
	VIPManager:             {"trireme-vip", "/usr/local/bin/trireme-vip"},
	CloudControllerManager: {"trireme-cloud-controller-manager", "/usr/local/bin/trireme-cloud-controller-manager"},
}

// Well-known ports.
const (
	EtcdClientPort             = 2379
	EtcdPeerPort               = 2380
	EtcdMetricsPort            = 2381
	ControllerManagerPort      = 10257
	CloudControllerManagerPort = 10258
	SchedulerPort              = 10259
	DefaultEtcdHealthEndpoint  = "/livez"
)

// EtcdQuotaBackendBytes is etcd's --quota-backend-bytes: 8 GB.
const EtcdQuotaBackendBytes int64 = 8 << 30

// EtcdClientURLsAnnotation on the etcd pod (kubeadm's) is its member's client
// URL: joining control-plane nodes find the members through it.
const EtcdClientURLsAnnotation = "kubeadm.kubernetes.io/etcd.advertise-client-urls"

// Path returns the manifest file of component.
func Path(manifestsDir, component string) string {
	return filepath.Join(manifestsDir, component+".yaml")
}

// Write renders component's pod for cfg and writes it into the manifests directory.
func Write(cfg *options.Config, component string) (string, error) {
	var pod *corev1.Pod
	var err error
	switch component {
	case Etcd:
		pod, err = EtcdPod(cfg)
	case APIServer:
		pod, err = APIServerPod(cfg)
	case ControllerManager:
		pod = ControllerManagerPod(cfg)
	case Scheduler:
		pod = SchedulerPod(cfg)
	case VIPManager:
		pod, err = VIPManagerPod(cfg)
	case CloudControllerManager:
		pod = CloudControllerManagerPod(cfg)
	case EtcdSnapshot:
		pod, err = EtcdSnapshotPod(cfg)
	default:
		return "", fmt.Errorf("unknown component %q", component)
	}
	if err != nil {
		return "", err
	}
	data, err := yaml.Marshal(pod)
	if err != nil {
		return "", err
	}
	path := Path(cfg.Paths.ManifestsDir(), component)
	return path, pki.WriteFile(path, data, 0o600)
}

// Read parses a manifest file.
func Read(path string) (*corev1.Pod, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{}
	if err := yaml.UnmarshalStrict(data, pod); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pod, nil
}

// EtcdPod is the local etcd member.
func EtcdPod(cfg *options.Config) (*corev1.Pod, error) {
	if cfg.Cluster.Etcd.Local == nil {
		return nil, fmt.Errorf("etcd is external: there is no local member to run")
	}
	pkiDir := cfg.PKIDir()
	ip := cfg.Init.LocalAPIEndpoint.AdvertiseAddress
	name := cfg.NodeName()
	peerURL := "https://" + net.JoinHostPort(ip, strconv.Itoa(EtcdPeerPort))
	clientURL := "https://" + net.JoinHostPort(ip, strconv.Itoa(EtcdClientPort))
	etcdDir := filepath.Join(pkiDir, "etcd")
	flags := map[string]string{
		"name":                        name,
		"data-dir":                    cfg.EtcdDataDir(),
		"advertise-client-urls":       clientURL,
		"listen-client-urls":          "https://127.0.0.1:2379," + clientURL,
		"listen-peer-urls":            peerURL,
		"initial-advertise-peer-urls": peerURL,
		"initial-cluster":             name + "=" + peerURL,
		"listen-metrics-urls":         "http://127.0.0.1:" + strconv.Itoa(EtcdMetricsPort),
		"cert-file":                   filepath.Join(etcdDir, "server.crt"),
		"key-file":                    filepath.Join(etcdDir, "server.key"),
		"trusted-ca-file":             filepath.Join(etcdDir, "ca.crt"),
		"client-cert-auth":            "true",
		"peer-cert-file":              filepath.Join(etcdDir, "peer.crt"),
		"peer-key-file":               filepath.Join(etcdDir, "peer.key"),
		"peer-trusted-ca-file":        filepath.Join(etcdDir, "ca.crt"),
		"peer-client-cert-auth":       "true",
		"snapshot-count":              "10000",
		// 8 GB, etcd's suggested maximum, over its 2 GB default: past the
		// quota etcd raises NOSPACE and refuses writes (triremeadm etcd
		// defrag --disarm recovers).
		"quota-backend-bytes": strconv.FormatInt(EtcdQuotaBackendBytes, 10),
	}
	if cfg.EtcdInitialCluster != "" {
		flags["initial-cluster"] = cfg.EtcdInitialCluster
		flags["initial-cluster-state"] = "existing"
	}
	args := Args(flags, cfg.Cluster.Etcd.Local.ExtraArgs)
	probe := httpProbe("127.0.0.1", EtcdMetricsPort, DefaultEtcdHealthEndpoint, corev1.URISchemeHTTP)
	c := container(cfg, Etcd, args, probe, probe)
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi")}
	p := pod(Etcd, c, []mount{
		{"etcd-data", cfg.EtcdDataDir(), corev1.HostPathDirectoryOrCreate, false},
		{"etcd-certs", etcdDir, corev1.HostPathDirectoryOrCreate, false},
	})
	p.Annotations = map[string]string{EtcdClientURLsAnnotation: clientURL}
	return p, nil
}

// EtcdSnapshotPod snapshots the local member every interval into the
// snapshots directory through its loopback client URL, as the healthcheck
// client (the etcd image holds the binary, so it needs no image of its own).
func EtcdSnapshotPod(cfg *options.Config) (*corev1.Pod, error) {
	sn, ok := cfg.EtcdSnapshots()
	if !ok {
		return nil, fmt.Errorf("etcd snapshots are off or etcd is external")
	}
	etcdDir := filepath.Join(cfg.PKIDir(), "etcd")
	dir := cfg.Paths.In(sn.Dir)
	args := Args(map[string]string{
		"endpoint":  "https://127.0.0.1:" + strconv.Itoa(EtcdClientPort),
		"cacert":    filepath.Join(etcdDir, "ca.crt"),
		"cert":      filepath.Join(etcdDir, "healthcheck-client.crt"),
		"key":       filepath.Join(etcdDir, "healthcheck-client.key"),
		"dir":       dir,
		"node-name": cfg.NodeName(),
		"interval":  sn.Interval.Duration.String(),
		"retention": strconv.Itoa(int(*sn.Retention)),
	}, nil)
	img := Images[EtcdSnapshot]
	c := corev1.Container{
		Name:            EtcdSnapshot,
		Image:           cfg.Image(img.Image),
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         append([]string{img.Binary}, args...),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}},
	}
	return pod(EtcdSnapshot, c, []mount{
		{"etcd-certs", etcdDir, corev1.HostPathDirectoryOrCreate, true},
		{"etcd-snapshots", dir, corev1.HostPathDirectoryOrCreate, false},
	}), nil
}

// APIServerPod is the apiserver.
func APIServerPod(cfg *options.Config) (*corev1.Pod, error) {
	pkiDir := cfg.PKIDir()
	in := func(n string) string { return filepath.Join(pkiDir, n) }
	port := strconv.Itoa(int(cfg.Init.LocalAPIEndpoint.BindPort))
	flags := map[string]string{
		"advertise-address":                  cfg.Init.LocalAPIEndpoint.AdvertiseAddress,
		"secure-port":                        port,
		"authorization-mode":                 "Node,RBAC",
		"enable-admission-plugins":           "NodeRestriction",
		"enable-bootstrap-token-auth":        "true",
		"client-ca-file":                     in("ca.crt"),
		"tls-cert-file":                      in("apiserver.crt"),
		"tls-private-key-file":               in("apiserver.key"),
		"kubelet-client-certificate":         in("apiserver-kubelet-client.crt"),
		"kubelet-client-key":                 in("apiserver-kubelet-client.key"),
		"kubelet-preferred-address-types":    "InternalIP,ExternalIP,Hostname",
		"requestheader-client-ca-file":       in("front-proxy-ca.crt"),
		"requestheader-allowed-names":        "front-proxy-client",
		"requestheader-username-headers":     "X-Remote-User",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
		// The aggregator's identity towards extension apiservers
		// (metrics-server): without it they see its requests as anonymous.
		"proxy-client-cert-file":           in("front-proxy-client.crt"),
		"proxy-client-key-file":            in("front-proxy-client.key"),
		"service-account-issuer":           "https://kubernetes.default.svc." + cfg.Cluster.Networking.DNSDomain,
		"service-account-key-file":         in("sa.pub"),
		"service-account-signing-key-file": in("sa.key"),
		"service-cluster-ip-range":         cfg.Cluster.Networking.ServiceSubnet,
		// A terminating apiserver (an upgrade, a restart) fails /readyz at
		// once but serves on for this long: the VIP manager hands the
		// address over meanwhile, and load balancers take it out, before
		// it stops answering.
		"shutdown-delay-duration": "3s",
	}
	if x := cfg.Cluster.Etcd.External; x != nil {
		flags["etcd-servers"] = strings.Join(x.Endpoints, ",")
		if x.CAFile != "" {
			flags["etcd-cafile"] = x.CAFile
		}
		if x.CertFile != "" {
			flags["etcd-certfile"], flags["etcd-keyfile"] = x.CertFile, x.KeyFile
		}
	} else {
		flags["etcd-servers"] = "https://127.0.0.1:" + strconv.Itoa(EtcdClientPort)
		flags["etcd-cafile"] = in("etcd/ca.crt")
		flags["etcd-certfile"] = in("apiserver-etcd-client.crt")
		flags["etcd-keyfile"] = in("apiserver-etcd-client.key")
	}
	args := Args(flags, cfg.Cluster.APIServer.ExtraArgs)
	host := cfg.Init.LocalAPIEndpoint.AdvertiseAddress
	live := httpProbe(host, int(cfg.Init.LocalAPIEndpoint.BindPort), "/livez", corev1.URISchemeHTTPS)
	c := container(cfg, APIServer, args, live, live)
	ready := httpProbe(host, int(cfg.Init.LocalAPIEndpoint.BindPort), "/readyz", corev1.URISchemeHTTPS)
	ready.FailureThreshold, ready.PeriodSeconds = 3, 1
	c.ReadinessProbe = ready
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	p := pod(APIServer, c, append(caMounts(), mount{"k8s-certs", pkiDir, corev1.HostPathDirectoryOrCreate, true}))
	p.Annotations = map[string]string{"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint": net.JoinHostPort(host, port)}
	return p, nil
}

// ControllerManagerPod is the controller-manager: it allocates node pod CIDRs, runs
// every default controller plus the bootstrap-token ones and signs CSRs with the
// cluster CA. Its controllers' service account tokens come from the apiserver's
// TokenRequest API, so it takes no sa.key. Its own kubeconfig also serves for
// delegated authentication and authorization of /metrics and /debug/pprof on
// its secure port, as kubeadm configures kube-controller-manager.
func ControllerManagerPod(cfg *options.Config) *corev1.Pod {
	pkiDir := cfg.PKIDir()
	in := func(n string) string { return filepath.Join(pkiDir, n) }
	kc := cfg.Paths.Kubeconfig("controller-manager.conf")
	flags := map[string]string{
		"allocate-node-cidrs":             "true",
		"cluster-cidr":                    cfg.Cluster.Networking.PodSubnet,
		"service-cluster-ip-range":        cfg.Cluster.Networking.ServiceSubnet,
		"controllers":                     "*,bootstrapsigner,tokencleaner",
		"use-service-account-credentials": "true",
		"kubeconfig":                      kc,
		"authentication-kubeconfig":       kc,
		"authorization-kubeconfig":        kc,
		"bind-address":                    "127.0.0.1",
		"leader-elect":                    "true",
		"root-ca-file":                    in("ca.crt"),
		"cluster-signing-cert-file":       in("ca.crt"),
		"cluster-signing-key-file":        in("ca.key"),
		// Every replica warns (an Event on this Node, a metric) 30 days
		// before one of this node's certificates expires.
		"certificate-expiry-dir": pkiDir,
		"node-name":              cfg.NodeName(),
	}
	args := Args(flags, cfg.Cluster.ControllerManager.ExtraArgs)
	probe := httpProbe("127.0.0.1", ControllerManagerPort, "/healthz", corev1.URISchemeHTTPS)
	c := container(cfg, ControllerManager, args, probe, probe)
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
	return pod(ControllerManager, c, append(caMounts(),
		mount{"k8s-certs", pkiDir, corev1.HostPathDirectoryOrCreate, true},
		mount{"kubeconfig", kc, corev1.HostPathFileOrCreate, true},
	))
}

// CloudControllerManagerPod is trireme-cloud-controller-manager: node
// initialization from the --cloud-config inventory and LoadBalancer
// addresses, leader-elected (Lease kube-system/cloud-controller-manager)
// across the control-plane nodes. The cloud config's directory is mounted,
// not the file, so that an edit that replaces the file reaches the
// running controller, which re-reads it.
func CloudControllerManagerPod(cfg *options.Config) *corev1.Pod {
	kc := cfg.Paths.Kubeconfig(kubeconfig.CloudControllerManagerKubeconfig)
	cloudConfig := cfg.Paths.In(cfg.Cluster.CloudControllerManager.CloudConfig)
	flags := map[string]string{
		"cloud-provider":            "trireme",
		"cloud-config":              cloudConfig,
		"configure-cloud-routes":    "false",
		"kubeconfig":                kc,
		"authentication-kubeconfig": kc,
		"authorization-kubeconfig":  kc,
		"bind-address":              "127.0.0.1",
		"secure-port":               strconv.Itoa(CloudControllerManagerPort),
		"leader-elect":              "true",
	}
	args := Args(flags, cfg.Cluster.CloudControllerManager.ExtraArgs)
	probe := httpProbe("127.0.0.1", CloudControllerManagerPort, "/healthz", corev1.URISchemeHTTPS)
	c := container(cfg, CloudControllerManager, args, probe, probe)
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
	return pod(CloudControllerManager, c, []mount{
		{"kubeconfig", kc, corev1.HostPathFileOrCreate, true},
		{"cloud-config", filepath.Dir(cloudConfig), corev1.HostPathDirectoryOrCreate, true},
	})
}

// SchedulerPod is the scheduler.
func SchedulerPod(cfg *options.Config) *corev1.Pod {
	kc := cfg.Paths.Kubeconfig("scheduler.conf")
	flags := map[string]string{
		"kubeconfig": kc,
		// /metrics and /debug are authorized by the apiserver, as kubeadm
		// configures kube-scheduler.
		"authentication-kubeconfig": kc,
		"authorization-kubeconfig":  kc,
		"bind-address":              "127.0.0.1",
		"leader-elect":              "true",
	}
	args := Args(flags, cfg.Cluster.Scheduler.ExtraArgs)
	probe := httpProbe("127.0.0.1", SchedulerPort, "/livez", corev1.URISchemeHTTPS)
	c := container(cfg, Scheduler, args, probe, probe)
	c.ReadinessProbe = httpProbe("127.0.0.1", SchedulerPort, "/readyz", corev1.URISchemeHTTPS)
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	return pod(Scheduler, c, []mount{{"kubeconfig", kc, corev1.HostPathFileOrCreate, true}})
}

// VIPManagerKubeconfig is the VIP manager's kubeconfig: this node's own
// apiserver, so that a holder whose apiserver is down loses the lease.
const VIPManagerKubeconfig = "vip-manager.conf"

// VIPManagerPod holds ControlPlaneEndpoint's IP on the node whose manager holds
// the Lease. It needs NET_ADMIN for the address and NET_RAW for ARP.
func VIPManagerPod(cfg *options.Config) (*corev1.Pod, error) {
	privileged := true
	v := cfg.Cluster.VirtualIP
	if v == nil {
		return nil, fmt.Errorf("no virtualIP is configured")
	}
	host := cfg.Cluster.ControlPlaneEndpoint
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	kc := cfg.Paths.Kubeconfig(VIPManagerKubeconfig)
	flags := map[string]string{
		"vip":        host,
		"node-ip":    cfg.Init.LocalAPIEndpoint.AdvertiseAddress,
		"id":         cfg.NodeName(),
		"kubeconfig": kc,
	}
	if v.Interface != "" {
		flags["interface"] = v.Interface
	}
	img := Images[VIPManager]
	c := corev1.Container{
		Name:            VIPManager,
		Image:           cfg.Image(img.Image),
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         append([]string{img.Binary}, Args(flags, nil)...),
		// Privileged, as the proxy runs: adding NET_ADMIN alone is refused on
		// hosts whose runtime drops it from the bounding set.
		SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
		Resources:       corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
		// Fails only while this node leads and cannot renew the lease.
		LivenessProbe: httpProbe("127.0.0.1", vip.DefaultPort, "/healthz", corev1.URISchemeHTTP),
	}
	return pod(VIPManager, c, []mount{{"kubeconfig", kc, corev1.HostPathFileOrCreate, true}}), nil
}

// Args renders flags as sorted --name=value arguments, extra args replacing flags of
// the same name (and repeated extra args kept in their order).
func Args(flags map[string]string, extra []v1alpha1.Arg) []string {
	merged := map[string][]string{}
	for k, v := range flags {
		merged[k] = []string{v}
	}
	seen := map[string]bool{}
	for _, a := range extra {
		if !seen[a.Name] {
			merged[a.Name], seen[a.Name] = nil, true
		}
		merged[a.Name] = append(merged[a.Name], a.Value)
	}
	names := make([]string, 0, len(merged))
	for k := range merged {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		for _, v := range merged[n] {
			out = append(out, "--"+n+"="+v)
		}
	}
	return out
}

// Flag returns the value of --name in args, and whether it is there.
func Flag(args []string, name string) (string, bool) {
	i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--"+name+"=") })
	if i < 0 {
		return "", false
	}
	return strings.TrimPrefix(args[i], "--"+name+"="), true
}

type mount struct {
	name     string
	path     string
	kind     corev1.HostPathType
	readOnly bool
}

// caMounts are the host's CA bundles, for components that call out (OIDC, webhooks).
func caMounts() []mount {
	return []mount{
		{"ca-certs", "/etc/ssl/certs", corev1.HostPathDirectoryOrCreate, true},
		{"etc-ca-certificates", "/etc/ca-certificates", corev1.HostPathDirectoryOrCreate, true},
	}
}

func container(cfg *options.Config, component string, args []string, live, startup *corev1.Probe) corev1.Container {
	img := Images[component]
	// kubeadm's budget for a start (4 minutes), probed every second rather
	// than every 10 s after 10 s: a component back within a second or two
	// (a restart, each step of an upgrade) is ready then, not 10-20 s later.
	startup = startup.DeepCopy()
	startup.InitialDelaySeconds, startup.PeriodSeconds, startup.FailureThreshold = 1, 1, 240
	return corev1.Container{
		Name:            component,
		Image:           cfg.Image(img.Image),
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         append([]string{img.Binary}, args...),
		LivenessProbe:   live,
		StartupProbe:    startup,
	}
}

func httpProbe(host string, port int, path string, scheme corev1.URIScheme) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Host: host, Port: intstr.FromInt32(int32(port)), Path: path, Scheme: scheme,
		}},
		InitialDelaySeconds: 10,
		TimeoutSeconds:      15,
		PeriodSeconds:       10,
		FailureThreshold:    8,
	}
}

func pod(name string, c corev1.Container, mounts []mount) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{"component": name, "tier": "control-plane"},
		},
		Spec: corev1.PodSpec{
			HostNetwork:       true,
			PriorityClassName: "system-node-critical",
			SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
	priority := int32(2000001000)
	p.Spec.Priority = &priority
	for _, m := range mounts {
		kind := m.kind
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: m.name, VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: m.path, Type: &kind}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: m.name, MountPath: m.path, ReadOnly: m.readOnly})
	}
	p.Spec.Containers = []corev1.Container{c}
	return p
}
