package kubelet

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Kind is the configuration kind this package serves.
const Kind = "KubeletConfiguration"

// DefaultContainerRuntimeEndpoint is upstream's default CRI socket.
const DefaultContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"

// Install adds KubeletConfiguration to s.
func Install(s *runtime.Scheme) error {
	return kubeletv1beta1.AddToScheme(s)
}

// Scheme knows the one kind the kubelet's --config accepts.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := Install(s); err != nil {
		panic(fmt.Sprintf("install %s: %v", kubeletv1beta1.SchemeGroupVersion, err))
	}
	return s
}()

// Default returns a configuration with every default applied, as if read
// from a file that names only the kind.
func Default() *kubeletv1beta1.KubeletConfiguration {
	cfg := &kubeletv1beta1.KubeletConfiguration{}
	SetDefaults(cfg)
	return cfg
}

// defaultDuration sets *d to v if it is zero.
func defaultDuration(d *metav1.Duration, v time.Duration) {
	if d.Duration == 0 {
		d.Duration = v
	}
}

// defaultString sets *s to v if it is empty.
func defaultString(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

// defaultInt32 sets *i to v if it is zero.
func defaultInt32(i *int32, v int32) {
	if *i == 0 {
		*i = v
	}
}

// defaultPtr points *p at a copy of v if it is nil: the optional fields
// whose zero value is a setting of its own (false, 0) are pointers.
func defaultPtr[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}

// SetDefaults fills what cfg leaves empty with upstream's defaults
// (k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1), including the
// surprising ones: failCgroupV1 defaults to true, the read-only port is
// off, anonymous authentication is off and authorization is Webhook.
func SetDefaults(cfg *kubeletv1beta1.KubeletConfiguration) {
	cfg.APIVersion = kubeletv1beta1.SchemeGroupVersion.String()
	cfg.Kind = Kind
	defaultServing(cfg)
	defaultAPIClient(cfg)
	defaultPods(cfg)
	defaultImages(cfg)
	defaultEviction(cfg)
	defaultResources(cfg)
	defaultContainerLogs(cfg)
}

// defaultServing defaults the kubelet's HTTPS server (address, who may
// call it, which handlers it serves) and its healthz endpoint.
func defaultServing(cfg *kubeletv1beta1.KubeletConfiguration) {
	defaultPtr(&cfg.EnableServer, true)
	defaultString(&cfg.Address, "0.0.0.0")
	defaultInt32(&cfg.Port, 10250)
	defaultPtr(&cfg.Authentication.Anonymous.Enabled, false)
	defaultPtr(&cfg.Authentication.Webhook.Enabled, true)
	defaultDuration(&cfg.Authentication.Webhook.CacheTTL, 2*time.Minute)
	if cfg.Authorization.Mode == "" {
		cfg.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationModeWebhook
	}
	defaultDuration(&cfg.Authorization.Webhook.CacheAuthorizedTTL, 5*time.Minute)
	defaultDuration(&cfg.Authorization.Webhook.CacheUnauthorizedTTL, 30*time.Second)
	defaultPtr(&cfg.EnableDebuggingHandlers, true)
	defaultPtr(&cfg.EnableSystemLogHandler, true)
	defaultPtr(&cfg.EnableProfilingHandler, true)
	defaultPtr(&cfg.EnableDebugFlagsHandler, true)
	defaultDuration(&cfg.StreamingConnectionIdleTimeout, 4*time.Hour)
	defaultPtr(&cfg.HealthzPort, int32(10248))
	defaultString(&cfg.HealthzBindAddress, "127.0.0.1")
}

// defaultAPIClient defaults how the kubelet talks to the API server: its
// rate limits, its events', and how often it reports the Node.
func defaultAPIClient(cfg *kubeletv1beta1.KubeletConfiguration) {
	defaultString(&cfg.ContentType, "application/vnd.kubernetes.protobuf")
	defaultPtr(&cfg.KubeAPIQPS, int32(50))
	defaultInt32(&cfg.KubeAPIBurst, 100)
	defaultPtr(&cfg.EventRecordQPS, int32(50))
	defaultInt32(&cfg.EventBurst, 100)
	defaultPtr(&cfg.RegisterNode, true)
	defaultDuration(&cfg.NodeStatusReportFrequency, 5*time.Minute)
	defaultDuration(&cfg.NodeStatusUpdateFrequency, 10*time.Second)
	defaultInt32(&cfg.NodeLeaseDurationSeconds, 40)
	defaultPtr(&cfg.NodeStatusMaxImages, int32(50))
	defaultString((*string)(&cfg.ConfigMapAndSecretChangeDetectionStrategy), string(kubeletv1beta1.WatchChangeDetectionStrategy))
	defaultPtr(&cfg.EnableControllerAttachDetach, true)
}

// defaultPods defaults where pods come from and how they run: sync
// periods, the container runtime, their network and volumes.
func defaultPods(cfg *kubeletv1beta1.KubeletConfiguration) {
	defaultDuration(&cfg.SyncFrequency, time.Minute)
	defaultDuration(&cfg.FileCheckFrequency, 20*time.Second)
	defaultDuration(&cfg.HTTPCheckFrequency, 20*time.Second)
	defaultString(&cfg.ContainerRuntimeEndpoint, DefaultContainerRuntimeEndpoint)
	defaultDuration(&cfg.RuntimeRequestTimeout, 2*time.Minute)
	defaultInt32(&cfg.MaxPods, 110)
	defaultPtr(&cfg.SeccompDefault, false)
	defaultString(&cfg.HairpinMode, "promiscuous-bridge")
	defaultPtr(&cfg.ResolverConfig, "/etc/resolv.conf")
	defaultPtr(&cfg.MakeIPTablesUtilChains, true)
	defaultString(&cfg.VolumePluginDir, "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/")
	defaultDuration(&cfg.VolumeStatsAggPeriod, time.Minute)
}

// defaultImages defaults image pulls and image garbage collection.
func defaultImages(cfg *kubeletv1beta1.KubeletConfiguration) {
	defaultPtr(&cfg.RegistryPullQPS, int32(5))
	defaultInt32(&cfg.RegistryBurst, 10)
	defaultPtr(&cfg.SerializeImagePulls, true)
	defaultDuration(&cfg.ImageMinimumGCAge, 2*time.Minute)
	defaultPtr(&cfg.ImageGCHighThresholdPercent, int32(85))
	defaultPtr(&cfg.ImageGCLowThresholdPercent, int32(80))
}

// defaultEviction defaults the thresholds at which the kubelet evicts
// pods, and how long a pressure condition outlasts them.
func defaultEviction(cfg *kubeletv1beta1.KubeletConfiguration) {
	if cfg.EvictionHard == nil {
		cfg.EvictionHard = map[string]string{
			"memory.available":  "100Mi",
			"nodefs.available":  "10%",
			"nodefs.inodesFree": "5%",
			"imagefs.available": "15%",
		}
	}
	defaultDuration(&cfg.EvictionPressureTransitionPeriod, 5*time.Minute)
	defaultPtr(&cfg.LocalStorageCapacityIsolation, true)
}

// defaultResources defaults what the kubelet asks of the host: cgroups,
// its own OOM score and open files, the CPU, memory and topology managers,
// pod limits and what node allocatable enforces.
func defaultResources(cfg *kubeletv1beta1.KubeletConfiguration) {
	defaultPtr(&cfg.FailCgroupV1, true)
	defaultPtr(&cfg.CgroupsPerQOS, true)
	defaultString(&cfg.CgroupDriver, "cgroupfs")
	defaultString(&cfg.CgroupRoot, "/")
	defaultPtr(&cfg.OOMScoreAdj, int32(-999))
	if cfg.MaxOpenFiles == 0 {
		cfg.MaxOpenFiles = 1000000
	}
	defaultPtr(&cfg.FailSwapOn, true)
	defaultString(&cfg.CPUManagerPolicy, "none")
	defaultDuration(&cfg.CPUManagerReconcilePeriod, 10*time.Second)
	defaultString(&cfg.MemoryManagerPolicy, "None")
	defaultString(&cfg.TopologyManagerPolicy, "none")
	defaultString(&cfg.TopologyManagerScope, "container")
	defaultPtr(&cfg.CPUCFSQuota, true)
	defaultPtr(&cfg.CPUCFSQuotaPeriod, metav1.Duration{Duration: 100 * time.Millisecond})
	defaultPtr(&cfg.MemoryThrottlingFactor, 0.9)
	defaultPtr(&cfg.PodPidsLimit, int64(-1))
	if cfg.EnforceNodeAllocatable == nil {
		cfg.EnforceNodeAllocatable = []string{"pods"}
	}
}

// defaultContainerLogs defaults where pod logs go, their rotation, and
// the kubelet's own log format.
func defaultContainerLogs(cfg *kubeletv1beta1.KubeletConfiguration) {
	defaultString(&cfg.PodLogsDir, "/var/log/pods")
	defaultString(&cfg.ContainerLogMaxSize, "10Mi")
	defaultPtr(&cfg.ContainerLogMaxFiles, int32(5))
	defaultPtr(&cfg.ContainerLogMaxWorkers, int32(1))
	defaultPtr(&cfg.ContainerLogMonitorInterval, metav1.Duration{Duration: 10 * time.Second})
	defaultString(&cfg.Logging.Format, "text")
}
