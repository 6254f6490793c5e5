package kubelet

import (
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// Kind is the configuration kind this package serves.
const Kind = "KubeletConfiguration"

// DefaultContainerRuntimeEndpoint is upstream's default CRI socket.
const DefaultContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"

// Install adds KubeletConfiguration to s.
func Install(s *runtime.Scheme) error {
	return kubeletv1beta1.AddToScheme(s)
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := Install(s); err != nil {
		panic(fmt.Sprintf("install %s: %v", kubeletv1beta1.SchemeGroupVersion, err))
	}
	return s
}()

// Decode parses a KubeletConfiguration in YAML or JSON and defaults it.
// Unknown and duplicate fields are errors, as upstream's strict decoding
// makes them.
func Decode(data []byte) (*kubeletv1beta1.KubeletConfiguration, error) {
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	obj, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	cfg, ok := obj.(*kubeletv1beta1.KubeletConfiguration)
	if !ok {
		return nil, fmt.Errorf("kind %s, want %s", gvk, Kind)
	}
	SetDefaults(cfg)
	return cfg, nil
}

// Load reads and defaults the KubeletConfiguration file at path.
func Load(path string) (*kubeletv1beta1.KubeletConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kubelet config: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("kubelet config %s: %w", path, err)
	}
	return cfg, nil
}

// Default returns a configuration with every default applied, as if read
// from a file that names only the kind.
func Default() *kubeletv1beta1.KubeletConfiguration {
	cfg := &kubeletv1beta1.KubeletConfiguration{}
	SetDefaults(cfg)
	return cfg
}

func defaultDuration(d *metav1.Duration, v time.Duration) {
	if d.Duration == 0 {
		d.Duration = v
	}
}

func defaultString(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

func defaultInt32(i *int32, v int32) {
	if *i == 0 {
		*i = v
	}
}

// SetDefaults fills what cfg leaves empty with upstream's defaults
// (k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1), including the
// surprising ones: failCgroupV1 defaults to true, the read-only port is
// off, anonymous authentication is off and authorization is Webhook.
func SetDefaults(cfg *kubeletv1beta1.KubeletConfiguration) {
	cfg.APIVersion = kubeletv1beta1.SchemeGroupVersion.String()
	cfg.Kind = Kind
	if cfg.EnableServer == nil {
		cfg.EnableServer = ptr.To(true)
	}
	defaultString(&cfg.PodLogsDir, "/var/log/pods")
	defaultDuration(&cfg.SyncFrequency, time.Minute)
	defaultDuration(&cfg.FileCheckFrequency, 20*time.Second)
	defaultDuration(&cfg.HTTPCheckFrequency, 20*time.Second)
	defaultString(&cfg.Address, "0.0.0.0")
	defaultInt32(&cfg.Port, 10250)
	if cfg.Authentication.Anonymous.Enabled == nil {
		cfg.Authentication.Anonymous.Enabled = ptr.To(false)
	}
	if cfg.Authentication.Webhook.Enabled == nil {
		cfg.Authentication.Webhook.Enabled = ptr.To(true)
	}
	defaultDuration(&cfg.Authentication.Webhook.CacheTTL, 2*time.Minute)
	if cfg.Authorization.Mode == "" {
		cfg.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationModeWebhook
	}
	defaultDuration(&cfg.Authorization.Webhook.CacheAuthorizedTTL, 5*time.Minute)
	defaultDuration(&cfg.Authorization.Webhook.CacheUnauthorizedTTL, 30*time.Second)
	if cfg.RegistryPullQPS == nil {
		cfg.RegistryPullQPS = ptr.To[int32](5)
	}
	defaultInt32(&cfg.RegistryBurst, 10)
	if cfg.EventRecordQPS == nil {
		cfg.EventRecordQPS = ptr.To[int32](50)
	}
	defaultInt32(&cfg.EventBurst, 100)
	if cfg.EnableDebuggingHandlers == nil {
		cfg.EnableDebuggingHandlers = ptr.To(true)
	}
	if cfg.HealthzPort == nil {
		cfg.HealthzPort = ptr.To[int32](10248)
	}
	defaultString(&cfg.HealthzBindAddress, "127.0.0.1")
	if cfg.OOMScoreAdj == nil {
		cfg.OOMScoreAdj = ptr.To[int32](-999)
	}
	defaultDuration(&cfg.StreamingConnectionIdleTimeout, 4*time.Hour)
	defaultDuration(&cfg.NodeStatusReportFrequency, 5*time.Minute)
	defaultDuration(&cfg.NodeStatusUpdateFrequency, 10*time.Second)
	defaultInt32(&cfg.NodeLeaseDurationSeconds, 40)
	defaultDuration(&cfg.ImageMinimumGCAge, 2*time.Minute)
	if cfg.ImageGCHighThresholdPercent == nil {
		cfg.ImageGCHighThresholdPercent = ptr.To[int32](85)
	}
	if cfg.ImageGCLowThresholdPercent == nil {
		cfg.ImageGCLowThresholdPercent = ptr.To[int32](80)
	}
	defaultDuration(&cfg.VolumeStatsAggPeriod, time.Minute)
	if cfg.CgroupsPerQOS == nil {
		cfg.CgroupsPerQOS = ptr.To(true)
	}
	defaultString(&cfg.CgroupDriver, "cgroupfs")
	defaultString(&cfg.CgroupRoot, "/")
	defaultString(&cfg.CPUManagerPolicy, "none")
	defaultDuration(&cfg.CPUManagerReconcilePeriod, 10*time.Second)
	defaultString(&cfg.MemoryManagerPolicy, "None")
	defaultString(&cfg.TopologyManagerPolicy, "none")
	defaultString(&cfg.TopologyManagerScope, "container")
	defaultDuration(&cfg.RuntimeRequestTimeout, 2*time.Minute)
	defaultString(&cfg.HairpinMode, "promiscuous-bridge")
	defaultInt32(&cfg.MaxPods, 110)
	if cfg.PodPidsLimit == nil {
		cfg.PodPidsLimit = ptr.To[int64](-1)
	}
	if cfg.ResolverConfig == nil {
		cfg.ResolverConfig = ptr.To("/etc/resolv.conf")
	}
	if cfg.CPUCFSQuota == nil {
		cfg.CPUCFSQuota = ptr.To(true)
	}
	if cfg.CPUCFSQuotaPeriod == nil {
		cfg.CPUCFSQuotaPeriod = &metav1.Duration{Duration: 100 * time.Millisecond}
	}
	if cfg.NodeStatusMaxImages == nil {
		cfg.NodeStatusMaxImages = ptr.To[int32](50)
	}
	if cfg.MaxOpenFiles == 0 {
		cfg.MaxOpenFiles = 1000000
	}
	defaultString(&cfg.ContentType, "application/vnd.kubernetes.protobuf")
	if cfg.KubeAPIQPS == nil {
		cfg.KubeAPIQPS = ptr.To[int32](50)
	}
	defaultInt32(&cfg.KubeAPIBurst, 100)
	if cfg.SerializeImagePulls == nil {
		cfg.SerializeImagePulls = ptr.To(true)
	}
	if cfg.EvictionHard == nil {
		cfg.EvictionHard = map[string]string{
			"memory.available":  "100Mi",
			"nodefs.available":  "10%",
			"nodefs.inodesFree": "5%",
			"imagefs.available": "15%",
		}
	}
	defaultDuration(&cfg.EvictionPressureTransitionPeriod, 5*time.Minute)
	if cfg.EnableControllerAttachDetach == nil {
		cfg.EnableControllerAttachDetach = ptr.To(true)
	}
	if cfg.MakeIPTablesUtilChains == nil {
		cfg.MakeIPTablesUtilChains = ptr.To(true)
	}
	if cfg.FailSwapOn == nil {
		cfg.FailSwapOn = ptr.To(true)
	}
	defaultString(&cfg.ContainerLogMaxSize, "10Mi")
	if cfg.ContainerLogMaxFiles == nil {
		cfg.ContainerLogMaxFiles = ptr.To[int32](5)
	}
	if cfg.ContainerLogMaxWorkers == nil {
		cfg.ContainerLogMaxWorkers = ptr.To[int32](1)
	}
	if cfg.ContainerLogMonitorInterval == nil {
		cfg.ContainerLogMonitorInterval = &metav1.Duration{Duration: 10 * time.Second}
	}
	defaultString((*string)(&cfg.ConfigMapAndSecretChangeDetectionStrategy), string(kubeletv1beta1.WatchChangeDetectionStrategy))
	if cfg.EnforceNodeAllocatable == nil {
		cfg.EnforceNodeAllocatable = []string{"pods"}
	}
	defaultString(&cfg.VolumePluginDir, "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/")
	if cfg.LocalStorageCapacityIsolation == nil {
		cfg.LocalStorageCapacityIsolation = ptr.To(true)
	}
	if cfg.RegisterNode == nil {
		cfg.RegisterNode = ptr.To(true)
	}
	if cfg.SeccompDefault == nil {
		cfg.SeccompDefault = ptr.To(false)
	}
	if cfg.MemoryThrottlingFactor == nil {
		cfg.MemoryThrottlingFactor = ptr.To(0.9)
	}
	defaultString(&cfg.ContainerRuntimeEndpoint, DefaultContainerRuntimeEndpoint)
	if cfg.FailCgroupV1 == nil {
		cfg.FailCgroupV1 = ptr.To(true)
	}
	if cfg.EnableSystemLogHandler == nil {
		cfg.EnableSystemLogHandler = ptr.To(true)
	}
	if cfg.EnableProfilingHandler == nil {
		cfg.EnableProfilingHandler = ptr.To(true)
	}
	if cfg.EnableDebugFlagsHandler == nil {
		cfg.EnableDebugFlagsHandler = ptr.To(true)
	}
	defaultString(&cfg.Logging.Format, "text")
}
