package controllers

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/controllers/disruption"
	"trireme.dev/controller-manager/internal/controllers/endpoints"
	"trireme.dev/controller-manager/internal/controllers/endpointslice"
	"trireme.dev/controller-manager/internal/controllers/endpointslicemirroring"
	"trireme.dev/controller-manager/internal/controllers/garbagecollector"
	"trireme.dev/controller-manager/internal/controllers/ingressrefs"
	"trireme.dev/controller-manager/internal/controllers/ingressstatus"
	"trireme.dev/controller-manager/internal/controllers/namespace"
	"trireme.dev/controller-manager/internal/controllers/podgc"
	"trireme.dev/controller-manager/internal/controllers/storageversionmigrator"
)

// The builders of the service and cluster controllers.

func buildEndpoints(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	cfg := cc.Config.EndpointController
	c, err := endpoints.New(endpoints.Options{
		Client:      client,
		Services:    core.Services(),
		Pods:        core.Pods(),
		Endpoints:   core.Endpoints(),
		Recorder:    events,
		BatchPeriod: cfg.EndpointUpdatesBatchPeriod.Duration,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, int(cfg.ConcurrentEndpointSyncs), nil
}

func buildEndpointSlice(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	cfg := cc.Config.EndpointSliceController
	c, err := endpointslice.New(endpointslice.Options{
		Client:        client,
		Services:      core.Services(),
		Pods:          core.Pods(),
		Nodes:         core.Nodes(),
		Slices:        cc.Informers.Discovery().V1().EndpointSlices(),
		Recorder:      events,
		MaxEndpoints:  cfg.MaxEndpointsPerSlice,
		BatchPeriod:   cfg.EndpointUpdatesBatchPeriod.Duration,
		TopologyHints: true,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, int(cfg.ConcurrentServiceEndpointSyncs), nil
}

func buildEndpointSliceMirroring(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	cfg := cc.Config.EndpointSliceMirroringController
	c, err := endpointslicemirroring.New(endpointslicemirroring.Options{
		Client:                client,
		Services:              core.Services(),
		Endpoints:             core.Endpoints(),
		Slices:                cc.Informers.Discovery().V1().EndpointSlices(),
		Recorder:              events,
		MaxEndpointsPerSubset: int(cfg.MirroringMaxEndpointsPerSubset),
	})
	if err != nil {
		return nil, 0, err
	}
	return c, int(cfg.MirroringConcurrentServiceEndpointSyncs), nil
}

// metadataClient is the metadata-only client acting as the controller
// named name.
func metadataClient(cc *Context, name string) (metadata.Interface, error) {
	cfg, err := cc.Clients.Config(name)
	if err != nil {
		return nil, err
	}
	m, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client for %s: %w", name, err)
	}
	return m, nil
}

func buildNamespace(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	meta, err := metadataClient(cc, "namespace-controller")
	if err != nil {
		return nil, 0, err
	}
	c, err := namespace.New(namespace.Options{
		Client:     client,
		Metadata:   meta,
		Discovery:  client.Discovery(),
		Namespaces: cc.Informers.Core().V1().Namespaces(),
		Recorder:   events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, int(cc.Config.NamespaceController.ConcurrentNamespaceSyncs), nil
}

func buildGarbageCollector(ctx context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	cfg := cc.Config.GarbageCollectorController
	if cfg.EnableGarbageCollector != nil && !*cfg.EnableGarbageCollector {
		logr.FromContextOrDiscard(ctx).Info("Garbage collector turned off by --enable-garbage-collector=false")
		return offController{}, 0, nil
	}
	meta, err := metadataClient(cc, "generic-garbage-collector")
	if err != nil {
		return nil, 0, err
	}
	c := garbagecollector.New(garbagecollector.Options{
		Metadata:  meta,
		Discovery: client.Discovery(),
		Recorder:  events,
	})
	return c, int(cfg.ConcurrentGCSyncs), nil
}

func buildStorageVersionMigrator(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	meta, err := metadataClient(cc, storageversionmigrator.Name)
	if err != nil {
		return nil, 0, err
	}
	c, err := storageversionmigrator.New(storageversionmigrator.Options{
		Client:     client,
		Metadata:   meta,
		Mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery())),
		Migrations: cc.Informers.Storagemigration().V1().StorageVersionMigrations(),
		Recorder:   events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildDisruption(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	f := cc.Informers
	cfg, err := cc.Clients.Config("disruption-controller")
	if err != nil {
		return nil, 0, err
	}
	scales, mapper, err := scaleClient(cfg, client)
	if err != nil {
		return nil, 0, err
	}
	c, err := disruption.New(disruption.Options{
		Client:       client,
		PDBs:         f.Policy().V1().PodDisruptionBudgets(),
		Pods:         f.Core().V1().Pods(),
		RCs:          f.Core().V1().ReplicationControllers(),
		ReplicaSets:  f.Apps().V1().ReplicaSets(),
		Deployments:  f.Apps().V1().Deployments(),
		StatefulSets: f.Apps().V1().StatefulSets(),
		Scales:       disruption.ScaleClient{Scales: scales, Mapper: mapper, Discovery: client.Discovery()},
		Recorder:     events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.DisruptionController.ConcurrentDisruptionSyncs, 1), nil
}

func buildPodGC(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	return podgc.New(podgc.Options{
		Client:     client,
		Pods:       core.Pods(),
		Nodes:      core.Nodes(),
		Recorder:   events,
		Threshold:  int(cc.Config.PodGCController.TerminatedPodGCThreshold),
		Quarantine: podgc.DefaultQuarantine,
	}), 1, nil
}

// offController is a controller turned off by its own flag: it waits for the end.
type offController struct{}

func (offController) Run(ctx context.Context, _ int) { <-ctx.Done() }

func buildIngressReferences(_ context.Context, cc *Context, _ kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	c, err := ingressrefs.New(ingressrefs.Options{
		Ingresses: cc.Informers.Networking().V1().Ingresses(),
		Services:  cc.Informers.Core().V1().Services(),
		// Only the Secrets' names are read: the metadata informer keeps
		// their data out of the controller-manager's memory.
		Secrets:  cc.Metadata.ForResource(corev1.SchemeGroupVersion.WithResource("secrets")),
		Recorder: events,
	})
	if err != nil {
		return nil, 0, err
	}
	// One worker: a sync reads three caches and may record an Event.
	return c, 1, nil
}

func buildIngressStatus(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	networking := cc.Informers.Networking().V1()
	c, err := ingressstatus.New(ingressstatus.Options{
		Client:         client,
		Ingresses:      networking.Ingresses(),
		IngressClasses: networking.IngressClasses(),
		Services:       cc.Informers.Core().V1().Services(),
		Recorder:       events,
	})
	if err != nil {
		return nil, 0, err
	}
	// Writes wait on the apiserver: several at once when many Ingresses
	// arrive together.
	return c, 4, nil
}
