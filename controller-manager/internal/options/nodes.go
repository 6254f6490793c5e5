package options

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
)

// addNodeFlags registers the flags of the node, storage, autoscaling and
// node-joining controllers, spelt and defaulted as kube-controller-manager's.
func (o *Options) addNodeFlags(fs *pflag.FlagSet) {
	kc := &o.Config.KubeCloudShared
	fs.BoolVar(&kc.AllocateNodeCIDRs, "allocate-node-cidrs", kc.AllocateNodeCIDRs, "Allocate each Node a pod CIDR out of --cluster-cidr.")
	fs.StringVar(&kc.ClusterCIDR, "cluster-cidr", kc.ClusterCIDR, "CIDR range of the cluster's pods, or an IPv4 and an IPv6 range separated by a comma for dual-stack; needs --allocate-node-cidrs.")
	ipam := &o.Config.NodeIPAMController
	fs.StringVar(&ipam.ServiceCIDR, "service-cluster-ip-range", ipam.ServiceCIDR, "CIDR range of Service ClusterIPs; node pod CIDRs are never allocated inside it.")
	fs.Int32Var(&ipam.NodeCIDRMaskSize, "node-cidr-mask-size", ipam.NodeCIDRMaskSize, "Mask size of each node's pod CIDR in a single-stack cluster (default 24 for IPv4, 64 for IPv6).")
	fs.Int32Var(&ipam.NodeCIDRMaskSizeIPv4, "node-cidr-mask-size-ipv4", ipam.NodeCIDRMaskSizeIPv4, "Mask size of each node's IPv4 pod CIDR in a dual-stack cluster (default 24).")
	fs.Int32Var(&ipam.NodeCIDRMaskSizeIPv6, "node-cidr-mask-size-ipv6", ipam.NodeCIDRMaskSizeIPv6, "Mask size of each node's IPv6 pod CIDR in a dual-stack cluster (default 64).")

	nl := &o.Config.NodeLifecycleController
	fs.DurationVar(&nl.NodeMonitorPeriod.Duration, "node-monitor-period", nl.NodeMonitorPeriod.Duration, "How often node health is checked.")
	fs.DurationVar(&nl.NodeMonitorGracePeriod.Duration, "node-monitor-grace-period", nl.NodeMonitorGracePeriod.Duration, "How long a running node may go without renewing its Lease or posting status before it is marked unhealthy.")
	fs.DurationVar(&nl.NodeStartupGracePeriod.Duration, "node-startup-grace-period", nl.NodeStartupGracePeriod.Duration, "How long a new node may go without posting status before it is marked unhealthy.")
	fs.Float32Var(&nl.NodeEvictionRate, "node-eviction-rate", nl.NodeEvictionRate, "Nodes per second whose pods are evicted (tainted NoExecute) when their zone is healthy.")
	fs.Float32Var(&nl.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", nl.SecondaryNodeEvictionRate, "Nodes per second whose pods are evicted when their zone is unhealthy; 0 in zones of --large-cluster-size-threshold nodes or fewer.")
	fs.Int32Var(&nl.LargeClusterSizeThreshold, "large-cluster-size-threshold", nl.LargeClusterSizeThreshold, "Zones of more nodes than this use --secondary-node-eviction-rate when unhealthy; smaller ones stop evicting.")
	fs.Float32Var(&nl.UnhealthyZoneThreshold, "unhealthy-zone-threshold", nl.UnhealthyZoneThreshold, "Fraction of NotReady nodes (at least 3) at which a zone counts as unhealthy.")

	cs := &o.Config.CSRSigningController
	fs.StringVar(&cs.ClusterSigningCertFile, "cluster-signing-cert-file", cs.ClusterSigningCertFile, "PEM CA certificate that signs certificates of every kubernetes.io signer not given its own files.")
	fs.StringVar(&cs.ClusterSigningKeyFile, "cluster-signing-key-file", cs.ClusterSigningKeyFile, "PEM RSA or ECDSA key of --cluster-signing-cert-file.")
	for _, s := range []struct {
		flag string
		cfg  *kcmconfig.CSRSigningConfiguration
		what string
	}{
		{"kubelet-serving", &cs.KubeletServingSignerConfiguration, "kubernetes.io/kubelet-serving"},
		{"kubelet-client", &cs.KubeletClientSignerConfiguration, "kubernetes.io/kube-apiserver-client-kubelet"},
		{"kube-apiserver-client", &cs.KubeAPIServerClientSignerConfiguration, "kubernetes.io/kube-apiserver-client"},
		{"legacy-unknown", &cs.LegacyUnknownSignerConfiguration, "kubernetes.io/legacy-unknown"},
	} {
		fs.StringVar(&s.cfg.CertFile, "cluster-signing-"+s.flag+"-cert-file", s.cfg.CertFile, "PEM CA certificate that signs "+s.what+" certificates; overrides --cluster-signing-cert-file for that signer.")
		fs.StringVar(&s.cfg.KeyFile, "cluster-signing-"+s.flag+"-key-file", s.cfg.KeyFile, "PEM key of --cluster-signing-"+s.flag+"-cert-file.")
	}
	fs.DurationVar(&cs.ClusterSigningDuration.Duration, "cluster-signing-duration", cs.ClusterSigningDuration.Duration, "Longest validity of a signed certificate; a CSR's spec.expirationSeconds may ask for less.")

	hpa := &o.Config.HPAController
	fs.DurationVar(&hpa.HorizontalPodAutoscalerSyncPeriod.Duration, "horizontal-pod-autoscaler-sync-period", hpa.HorizontalPodAutoscalerSyncPeriod.Duration, "How often each HorizontalPodAutoscaler is evaluated.")
	fs.DurationVar(&hpa.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration, "horizontal-pod-autoscaler-downscale-stabilization", hpa.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration, "Default scale-down stabilization window: the autoscaler never scales below the highest recommendation of this long.")
	fs.Float64Var(&hpa.HorizontalPodAutoscalerTolerance, "horizontal-pod-autoscaler-tolerance", hpa.HorizontalPodAutoscalerTolerance, "Smallest relative change of the usage ratio from 1.0 that makes the autoscaler scale.")
	fs.DurationVar(&hpa.HorizontalPodAutoscalerCPUInitializationPeriod.Duration, "horizontal-pod-autoscaler-cpu-initialization-period", hpa.HorizontalPodAutoscalerCPUInitializationPeriod.Duration, "Period after a pod starts during which its CPU samples may be skipped.")
	fs.DurationVar(&hpa.HorizontalPodAutoscalerInitialReadinessDelay.Duration, "horizontal-pod-autoscaler-initial-readiness-delay", hpa.HorizontalPodAutoscalerInitialReadinessDelay.Duration, "Period after a pod starts during which readiness changes count as its first readiness.")
	fs.Int32Var(&hpa.ConcurrentHorizontalPodAutoscalerSyncs, "concurrent-horizontal-pod-autoscaler-syncs", hpa.ConcurrentHorizontalPodAutoscalerSyncs, "HorizontalPodAutoscalers synced at once.")

	pv := &o.Config.PersistentVolumeBinderController
	fs.DurationVar(&pv.PVClaimBinderSyncPeriod.Duration, "pvclaimbinder-sync-period", pv.PVClaimBinderSyncPeriod.Duration, "How often every PersistentVolume and PersistentVolumeClaim is synced in full.")
	ev := &o.Config.EphemeralVolumeController
	fs.Int32Var(&ev.ConcurrentEphemeralVolumeSyncs, "concurrent-ephemeralvolume-syncs", ev.ConcurrentEphemeralVolumeSyncs, "Pods whose ephemeral volumes are synced at once.")
}

// setNodeDefaults applies kube-controller-manager's defaults to the node,
// storage, autoscaling and signing settings cfg leaves empty.
func setNodeDefaults(cfg *kcmconfig.KubeControllerManagerConfiguration) {
	nl := &cfg.NodeLifecycleController
	defaultDuration(&nl.NodeMonitorPeriod, 5*time.Second)
	defaultDuration(&nl.NodeMonitorGracePeriod, 50*time.Second)
	defaultDuration(&nl.NodeStartupGracePeriod, time.Minute)
	defaultDuration(&nl.PodEvictionTimeout, 5*time.Minute)
	if nl.NodeEvictionRate == 0 {
		nl.NodeEvictionRate = 0.1
	}
	if nl.SecondaryNodeEvictionRate == 0 {
		nl.SecondaryNodeEvictionRate = 0.01
	}
	if nl.LargeClusterSizeThreshold == 0 {
		nl.LargeClusterSizeThreshold = 50
	}
	if nl.UnhealthyZoneThreshold == 0 {
		nl.UnhealthyZoneThreshold = 0.55
	}
	defaultDuration(&cfg.CSRSigningController.ClusterSigningDuration, 365*24*time.Hour)
	hpa := &cfg.HPAController
	defaultDuration(&hpa.HorizontalPodAutoscalerSyncPeriod, 15*time.Second)
	defaultDuration(&hpa.HorizontalPodAutoscalerDownscaleStabilizationWindow, 5*time.Minute)
	defaultDuration(&hpa.HorizontalPodAutoscalerCPUInitializationPeriod, 5*time.Minute)
	defaultDuration(&hpa.HorizontalPodAutoscalerInitialReadinessDelay, 30*time.Second)
	if hpa.HorizontalPodAutoscalerTolerance == 0 {
		hpa.HorizontalPodAutoscalerTolerance = 0.1
	}
	if hpa.ConcurrentHorizontalPodAutoscalerSyncs == 0 {
		hpa.ConcurrentHorizontalPodAutoscalerSyncs = 5
	}
	defaultDuration(&cfg.PersistentVolumeBinderController.PVClaimBinderSyncPeriod, 15*time.Second)
	if cfg.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs == 0 {
		cfg.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs = 5
	}
}

func defaultDuration(d *metav1.Duration, def time.Duration) {
	if d.Duration == 0 {
		d.Duration = def
	}
}

// validateNodes reports invalid node, storage, autoscaling and signing
// settings.
func (o *Options) validateNodes() []error {
	var errs []error
	kc := o.Config.KubeCloudShared
	if kc.AllocateNodeCIDRs {
		if kc.ClusterCIDR == "" {
			errs = append(errs, fmt.Errorf("--allocate-node-cidrs needs --cluster-cidr"))
		}
		for _, c := range strings.Split(kc.ClusterCIDR, ",") {
			if c == "" {
				continue
			}
			if _, _, err := net.ParseCIDR(strings.TrimSpace(c)); err != nil {
				errs = append(errs, fmt.Errorf("--cluster-cidr %q: %w", c, err))
			}
		}
	}
	nl := o.Config.NodeLifecycleController
	for flag, d := range map[string]time.Duration{
		"--node-monitor-period":                   nl.NodeMonitorPeriod.Duration,
		"--node-monitor-grace-period":             nl.NodeMonitorGracePeriod.Duration,
		"--node-startup-grace-period":             nl.NodeStartupGracePeriod.Duration,
		"--cluster-signing-duration":              o.Config.CSRSigningController.ClusterSigningDuration.Duration,
		"--horizontal-pod-autoscaler-sync-period": o.Config.HPAController.HorizontalPodAutoscalerSyncPeriod.Duration,
		"--pvclaimbinder-sync-period":             o.Config.PersistentVolumeBinderController.PVClaimBinderSyncPeriod.Duration,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", flag))
		}
	}
	if nl.NodeEvictionRate < 0 || nl.SecondaryNodeEvictionRate < 0 {
		errs = append(errs, fmt.Errorf("--node-eviction-rate and --secondary-node-eviction-rate must not be negative"))
	}
	if nl.UnhealthyZoneThreshold <= 0 || nl.UnhealthyZoneThreshold > 1 {
		errs = append(errs, fmt.Errorf("--unhealthy-zone-threshold must be in (0, 1]"))
	}
	cs := o.Config.CSRSigningController
	if (cs.ClusterSigningCertFile == "") != (cs.ClusterSigningKeyFile == "") {
		errs = append(errs, fmt.Errorf("--cluster-signing-cert-file and --cluster-signing-key-file must be given together"))
	}
	if n := o.Config.HPAController.ConcurrentHorizontalPodAutoscalerSyncs; n <= 0 {
		errs = append(errs, fmt.Errorf("--concurrent-horizontal-pod-autoscaler-syncs must be positive, got %d", n))
	}
	if n := o.Config.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs; n <= 0 {
		errs = append(errs, fmt.Errorf("--concurrent-ephemeralvolume-syncs must be positive, got %d", n))
	}
	if o.Config.HPAController.HorizontalPodAutoscalerTolerance < 0 {
		errs = append(errs, fmt.Errorf("--horizontal-pod-autoscaler-tolerance must not be negative"))
	}
	return errs
}
