package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
	"k8s.io/utils/ptr"
)

// addServiceAndClusterFlags registers the flags of the endpoint,
// endpointslice, endpointslicemirroring, namespace, garbagecollector and
// podgc controllers, as upstream names them.
func addServiceAndClusterFlags(fs *pflag.FlagSet, cfg *kcmconfig.KubeControllerManagerConfiguration) {
	es := &cfg.EndpointSliceController
	fs.Int32Var(&es.ConcurrentServiceEndpointSyncs, "concurrent-service-endpoint-syncs", es.ConcurrentServiceEndpointSyncs, "Services whose EndpointSlices are synced at once.")
	fs.Int32Var(&es.MaxEndpointsPerSlice, "max-endpoints-per-slice", es.MaxEndpointsPerSlice, "Most endpoints one EndpointSlice holds.")
	fs.DurationVar(&es.EndpointUpdatesBatchPeriod.Duration, "endpointslice-updates-batch-period", es.EndpointUpdatesBatchPeriod.Duration, "How long pod changes wait to be batched into one EndpointSlice update.")
	ep := &cfg.EndpointController
	fs.Int32Var(&ep.ConcurrentEndpointSyncs, "concurrent-endpoint-syncs", ep.ConcurrentEndpointSyncs, "Services whose Endpoints are synced at once.")
	fs.DurationVar(&ep.EndpointUpdatesBatchPeriod.Duration, "endpoint-updates-batch-period", ep.EndpointUpdatesBatchPeriod.Duration, "How long pod changes wait to be batched into one Endpoints update.")
	m := &cfg.EndpointSliceMirroringController
	fs.Int32Var(&m.MirroringConcurrentServiceEndpointSyncs, "mirroring-concurrent-service-endpoint-syncs", m.MirroringConcurrentServiceEndpointSyncs, "Endpoints mirrored to EndpointSlices at once.")
	fs.Int32Var(&m.MirroringMaxEndpointsPerSubset, "mirroring-max-endpoints-per-subset", m.MirroringMaxEndpointsPerSubset, "Most addresses of one Endpoints subset mirrored to EndpointSlices.")
	ns := &cfg.NamespaceController
	fs.Int32Var(&ns.ConcurrentNamespaceSyncs, "concurrent-namespace-syncs", ns.ConcurrentNamespaceSyncs, "Namespaces deleted at once.")
	fs.DurationVar(&ns.NamespaceSyncPeriod.Duration, "namespace-sync-period", ns.NamespaceSyncPeriod.Duration, "How often terminating namespaces are looked at again in full.")
	gc := &cfg.GarbageCollectorController
	fs.BoolVar(gc.EnableGarbageCollector, "enable-garbage-collector", *gc.EnableGarbageCollector, "Run the garbage collector; must agree with the apiserver's setting.")
	fs.Int32Var(&gc.ConcurrentGCSyncs, "concurrent-gc-syncs", gc.ConcurrentGCSyncs, "Garbage collector workers.")
	fs.Int32Var(&cfg.PodGCController.TerminatedPodGCThreshold, "terminated-pod-gc-threshold", cfg.PodGCController.TerminatedPodGCThreshold, "Terminated pods kept before the oldest are deleted; 0 keeps them all.")
}

// setServiceAndClusterDefaults applies kube-controller-manager's defaults
// to those controllers' fields cfg leaves empty.
func setServiceAndClusterDefaults(cfg *kcmconfig.KubeControllerManagerConfiguration) {
	orInt := func(p *int32, v int32) {
		if *p == 0 {
			*p = v
		}
	}
	orInt(&cfg.EndpointSliceController.ConcurrentServiceEndpointSyncs, 5)
	orInt(&cfg.EndpointSliceController.MaxEndpointsPerSlice, 100)
	orInt(&cfg.EndpointController.ConcurrentEndpointSyncs, 5)
	orInt(&cfg.EndpointSliceMirroringController.MirroringConcurrentServiceEndpointSyncs, 5)
	orInt(&cfg.EndpointSliceMirroringController.MirroringMaxEndpointsPerSubset, 1000)
	orInt(&cfg.NamespaceController.ConcurrentNamespaceSyncs, 10)
	if cfg.NamespaceController.NamespaceSyncPeriod.Duration == 0 {
		cfg.NamespaceController.NamespaceSyncPeriod = metav1.Duration{Duration: 5 * time.Minute}
	}
	gc := &cfg.GarbageCollectorController
	if gc.EnableGarbageCollector == nil {
		gc.EnableGarbageCollector = ptr.To(true)
	}
	orInt(&gc.ConcurrentGCSyncs, 20)
	orInt(&cfg.PodGCController.TerminatedPodGCThreshold, 12500)
}

// validateServiceAndCluster reports invalid values of those flags.
func validateServiceAndCluster(cfg *kcmconfig.KubeControllerManagerConfiguration) []error {
	var errs []error
	positive := func(v int32, flag string) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive", flag))
		}
	}
	positive(cfg.EndpointSliceController.ConcurrentServiceEndpointSyncs, "concurrent-service-endpoint-syncs")
	positive(cfg.EndpointController.ConcurrentEndpointSyncs, "concurrent-endpoint-syncs")
	positive(cfg.EndpointSliceMirroringController.MirroringConcurrentServiceEndpointSyncs, "mirroring-concurrent-service-endpoint-syncs")
	positive(cfg.EndpointSliceMirroringController.MirroringMaxEndpointsPerSubset, "mirroring-max-endpoints-per-subset")
	positive(cfg.NamespaceController.ConcurrentNamespaceSyncs, "concurrent-namespace-syncs")
	positive(cfg.GarbageCollectorController.ConcurrentGCSyncs, "concurrent-gc-syncs")
	if v := cfg.EndpointSliceController.MaxEndpointsPerSlice; v < 1 || v > 1000 {
		errs = append(errs, fmt.Errorf("--max-endpoints-per-slice %d: must be between 1 and 1000", v))
	}
	if cfg.PodGCController.TerminatedPodGCThreshold < 0 {
		errs = append(errs, fmt.Errorf("--terminated-pod-gc-threshold must not be negative"))
	}
	return errs
}
