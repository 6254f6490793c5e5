package controllers

import (
	"context"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/controllers/bootstrapsigner"
	"trireme.dev/controller-manager/internal/controllers/clusterroleaggregation"
	"trireme.dev/controller-manager/internal/controllers/cronjob"
	"trireme.dev/controller-manager/internal/controllers/csrapproving"
	"trireme.dev/controller-manager/internal/controllers/csrsigning"
	"trireme.dev/controller-manager/internal/controllers/daemonset"
	"trireme.dev/controller-manager/internal/controllers/deployment"
	"trireme.dev/controller-manager/internal/controllers/disruption"
	"trireme.dev/controller-manager/internal/controllers/endpoints"
	"trireme.dev/controller-manager/internal/controllers/endpointslice"
	"trireme.dev/controller-manager/internal/controllers/endpointslicemirroring"
	"trireme.dev/controller-manager/internal/controllers/ephemeral"
	"trireme.dev/controller-manager/internal/controllers/garbagecollector"
	"trireme.dev/controller-manager/internal/controllers/ingressrefs"
	"trireme.dev/controller-manager/internal/controllers/ingressstatus"
	"trireme.dev/controller-manager/internal/controllers/job"
	"trireme.dev/controller-manager/internal/controllers/namespace"
	"trireme.dev/controller-manager/internal/controllers/nodeipam"
	"trireme.dev/controller-manager/internal/controllers/nodelifecycle"
	"trireme.dev/controller-manager/internal/controllers/persistentvolume"
	"trireme.dev/controller-manager/internal/controllers/podautoscaler"
	"trireme.dev/controller-manager/internal/controllers/podgc"
	"trireme.dev/controller-manager/internal/controllers/pvcprotection"
	"trireme.dev/controller-manager/internal/controllers/pvprotection"
	"trireme.dev/controller-manager/internal/controllers/replicaset"
	"trireme.dev/controller-manager/internal/controllers/replicationcontroller"
	"trireme.dev/controller-manager/internal/controllers/resourcequota"
	"trireme.dev/controller-manager/internal/controllers/rootcacertpublisher"
	"trireme.dev/controller-manager/internal/controllers/serviceaccount"
	"trireme.dev/controller-manager/internal/controllers/statefulset"
	"trireme.dev/controller-manager/internal/controllers/storageversionmigrator"
	"trireme.dev/controller-manager/internal/controllers/tainteviction"
	"trireme.dev/controller-manager/internal/controllers/tokencleaner"
	"trireme.dev/controller-manager/internal/controllers/ttlafterfinished"
)

// All is every controller, in start order. Adding a controller is one
// entry here and its own package.
var All = []Descriptor{
	{
		Name:       serviceaccount.Name,
		Aliases:    []string{"serviceaccount-controller"},
		ClientName: "service-account-controller",
		Build:      buildServiceAccount,
	},
	{
		Name:       rootcacertpublisher.Name,
		Aliases:    []string{"root-ca-certificate-publisher-controller"},
		ClientName: "root-ca-cert-publisher",
		Build:      buildRootCAPublisher,
	},
	{
		Name:       resourcequota.Name,
		Aliases:    []string{"resourcequota-controller"},
		ClientName: "resourcequota-controller",
		Build:      buildResourceQuota,
	},
	{
		Name:       clusterroleaggregation.Name,
		Aliases:    []string{"clusterrole-aggregation-controller"},
		ClientName: "clusterrole-aggregation-controller",
		Requires:   []schema.GroupVersion{clusterroleaggregation.GroupVersion},
		Build:      buildClusterRoleAggregation,
	},
	{
		Name:       endpoints.Name,
		Aliases:    []string{"endpoints-controller"},
		ClientName: "endpoint-controller",
		Build:      buildEndpoints,
	},
	{
		Name:       endpointslice.Name,
		Aliases:    []string{"endpointslice-controller"},
		ClientName: "endpointslice-controller",
		Build:      buildEndpointSlice,
	},
	{
		Name:       endpointslicemirroring.Name,
		Aliases:    []string{"endpointslice-mirroring-controller"},
		ClientName: "endpointslicemirroring-controller",
		Build:      buildEndpointSliceMirroring,
	},
	{
		Name:       namespace.Name,
		Aliases:    []string{"namespace-controller"},
		ClientName: "namespace-controller",
		Build:      buildNamespace,
	},
	{
		Name:       garbagecollector.Name,
		Aliases:    []string{"garbage-collector-controller"},
		ClientName: "generic-garbage-collector",
		Build:      buildGarbageCollector,
	},
	{
		Name:       disruption.Name,
		Aliases:    []string{"disruption-controller"},
		ClientName: "disruption-controller",
		Build:      buildDisruption,
	},
	{
		Name:       podgc.Name,
		Aliases:    []string{"pod-garbage-collector-controller"},
		ClientName: "pod-garbage-collector",
		Build:      buildPodGC,
	},
	{
		Name:       nodelifecycle.Name,
		Aliases:    []string{"node-lifecycle-controller"},
		ClientName: "node-controller",
		Build:      buildNodeLifecycle,
	},
	{
		Name: tainteviction.Name,
		// Upstream's taint manager acts with the node controller's role.
		ClientName: "node-controller",
		Build:      buildTaintEviction,
	},
	{
		Name:       nodeipam.Name,
		Aliases:    []string{"node-ipam-controller"},
		ClientName: "node-controller",
		Build:      buildNodeIPAM,
	},
	{
		Name:       csrapproving.Name,
		Aliases:    []string{"certificatesigningrequest-approving-controller"},
		ClientName: "certificate-controller",
		Build:      buildCSRApproving,
	},
	{
		Name:       csrsigning.Name,
		Aliases:    []string{"certificatesigningrequest-signing-controller"},
		ClientName: "certificate-controller",
		Build:      buildCSRSigning,
	},
	{
		Name:       bootstrapsigner.Name,
		Aliases:    []string{"bootstrap-signer-controller"},
		ClientName: "bootstrap-signer",
		// Off by default, as upstream: a cluster without bootstrap
		// tokens has no cluster-info to sign.
		OffByDefault: true,
		Build:        buildBootstrapSigner,
	},
	{
		Name:         tokencleaner.Name,
		Aliases:      []string{"token-cleaner-controller"},
		ClientName:   "token-cleaner",
		OffByDefault: true,
		Build:        buildTokenCleaner,
	},
	{
		Name:       persistentvolume.Name,
		Aliases:    []string{"persistentvolume-binder-controller"},
		ClientName: "persistent-volume-binder",
		Build:      buildPersistentVolumeBinder,
	},
	{
		Name:       pvcprotection.Name,
		Aliases:    []string{"persistentvolumeclaim-protection-controller"},
		ClientName: "pvc-protection-controller",
		Build:      buildPVCProtection,
	},
	{
		Name:       pvprotection.Name,
		Aliases:    []string{"persistentvolume-protection-controller"},
		ClientName: "pv-protection-controller",
		Build:      buildPVProtection,
	},
	{
		Name:       ephemeral.Name,
		Aliases:    []string{"ephemeral-volume-controller"},
		ClientName: "ephemeral-volume-controller",
		Build:      buildEphemeralVolume,
	},
	{
		Name:       podautoscaler.Name,
		Aliases:    []string{"horizontal-pod-autoscaler-controller"},
		ClientName: "horizontal-pod-autoscaler",
		Requires:   []schema.GroupVersion{{Group: "autoscaling", Version: "v2"}},
		Build:      buildHorizontalPodAutoscaler,
	},
	{
		Name:       replicaset.Name,
		Aliases:    []string{"replicaset-controller"},
		ClientName: "replicaset-controller",
		Build:      buildReplicaSet,
	},
	{
		Name:       replicationcontroller.Name,
		Aliases:    []string{"replicationcontroller-controller"},
		ClientName: "replication-controller",
		Build:      buildReplicationController,
	},
	{
		Name:       deployment.Name,
		Aliases:    []string{"deployment-controller"},
		ClientName: "deployment-controller",
		Build:      buildDeployment,
	},
	{
		Name:       statefulset.Name,
		Aliases:    []string{"statefulset-controller"},
		ClientName: "statefulset-controller",
		Build:      buildStatefulSet,
	},
	{
		Name:       daemonset.Name,
		Aliases:    []string{"daemonset-controller"},
		ClientName: "daemon-set-controller",
		Build:      buildDaemonSet,
	},
	{
		Name:       job.Name,
		Aliases:    []string{"job-controller"},
		ClientName: "job-controller",
		Build:      buildJob,
	},
	{
		Name:       cronjob.Name,
		Aliases:    []string{"cronjob-controller"},
		ClientName: "cronjob-controller",
		Build:      buildCronJob,
	},
	{
		Name:       ttlafterfinished.Name,
		Aliases:    []string{"ttl-after-finished-controller"},
		ClientName: "ttl-after-finished-controller",
		Build:      buildTTLAfterFinished,
	},
	{
		Name:       storageversionmigrator.Name,
		ClientName: storageversionmigrator.Name,
		Requires:   []schema.GroupVersion{svmv1.SchemeGroupVersion},
		Build:      buildStorageVersionMigrator,
	},
	{
		// Trireme's own: Warning Events for what Ingresses name that is
		// missing, which ingress controllers only log.
		Name:       ingressrefs.Name,
		ClientName: "ingress-references-controller",
		Requires:   []schema.GroupVersion{networkingv1.SchemeGroupVersion},
		Build:      buildIngressReferences,
	},
	{
		// Trireme's own: Ingresses' addresses, written here rather than
		// by the ingress controller (see package ingressstatus).
		Name:       ingressstatus.Name,
		ClientName: "ingress-status-controller",
		Requires:   []schema.GroupVersion{networkingv1.SchemeGroupVersion},
		Build:      buildIngressStatus,
	},
}

func buildServiceAccount(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	c, err := serviceaccount.New(serviceaccount.Options{
		Client:          client,
		Namespaces:      core.Namespaces(),
		ServiceAccounts: core.ServiceAccounts(),
		Recorder:        events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildRootCAPublisher(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	p, err := rootcacertpublisher.New(rootcacertpublisher.Options{
		Client:     client,
		Namespaces: core.Namespaces(),
		ConfigMaps: core.ConfigMaps(),
		Recorder:   events,
		RootCA:     cc.RootCA,
	})
	if err != nil {
		return nil, 0, err
	}
	return p, 1, nil
}

func buildResourceQuota(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	rq := cc.Config.ResourceQuotaController
	c, err := resourcequota.New(resourcequota.Options{
		Client:     client,
		Quotas:     core.ResourceQuotas(),
		Pods:       core.Pods(),
		Services:   core.Services(),
		Claims:     core.PersistentVolumeClaims(),
		Metadata:   cc.Metadata,
		Resolver:   cc.Resolver,
		Recorder:   events,
		SyncPeriod: rq.ResourceQuotaSyncPeriod.Duration,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, int(rq.ConcurrentResourceQuotaSyncs), nil
}

func buildClusterRoleAggregation(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	c, err := clusterroleaggregation.New(clusterroleaggregation.Options{
		Client:       client,
		ClusterRoles: cc.Informers.Rbac().V1().ClusterRoles(),
		Recorder:     events,
	})
	if err != nil {
		return nil, 0, fmt.Errorf("clusterrole aggregation: %w", err)
	}
	// Upstream runs five workers: aggregated roles are few and cheap.
	return c, 5, nil
}

// workers is the configured worker count, or upstream's default when the
// configuration leaves it unset.
func workers(configured, upstream int32) int {
	if configured > 0 {
		return int(configured)
	}
	return int(upstream)
}

func buildReplicaSet(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	c, err := replicaset.New(replicaset.Options{
		Client:   client,
		Source:   replicaset.NewReplicaSets(client, cc.Informers.Apps().V1().ReplicaSets()),
		Pods:     cc.Informers.Core().V1().Pods(),
		Recorder: events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.ReplicaSetController.ConcurrentRSSyncs, 5), nil
}

func buildReplicationController(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	c, err := replicationcontroller.New(replicationcontroller.Options{
		Client:                 client,
		ReplicationControllers: core.ReplicationControllers(),
		Pods:                   core.Pods(),
		Recorder:               events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.ReplicationController.ConcurrentRCSyncs, 5), nil
}

func buildDeployment(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	apps := cc.Informers.Apps().V1()
	c, err := deployment.New(deployment.Options{
		Client:      client,
		Deployments: apps.Deployments(),
		ReplicaSets: apps.ReplicaSets(),
		Pods:        cc.Informers.Core().V1().Pods(),
		Recorder:    events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.DeploymentController.ConcurrentDeploymentSyncs, 5), nil
}

func buildStatefulSet(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	apps, core := cc.Informers.Apps().V1(), cc.Informers.Core().V1()
	c, err := statefulset.New(statefulset.Options{
		Client:       client,
		StatefulSets: apps.StatefulSets(),
		Pods:         core.Pods(),
		Claims:       core.PersistentVolumeClaims(),
		Revisions:    apps.ControllerRevisions(),
		Recorder:     events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.StatefulSetController.ConcurrentStatefulSetSyncs, 5), nil
}

func buildDaemonSet(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	apps, core := cc.Informers.Apps().V1(), cc.Informers.Core().V1()
	c, err := daemonset.New(daemonset.Options{
		Client:     client,
		DaemonSets: apps.DaemonSets(),
		Pods:       core.Pods(),
		Nodes:      core.Nodes(),
		Revisions:  apps.ControllerRevisions(),
		Recorder:   events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.DaemonSetController.ConcurrentDaemonSetSyncs, 2), nil
}

func buildJob(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	c, err := job.New(job.Options{
		Client:   client,
		Jobs:     cc.Informers.Batch().V1().Jobs(),
		Pods:     cc.Informers.Core().V1().Pods(),
		Recorder: events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.JobController.ConcurrentJobSyncs, 5), nil
}

func buildCronJob(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	batch := cc.Informers.Batch().V1()
	c, err := cronjob.New(cronjob.Options{
		Client:   client,
		CronJobs: batch.CronJobs(),
		Jobs:     batch.Jobs(),
		Recorder: events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.CronJobController.ConcurrentCronJobSyncs, 5), nil
}

func buildTTLAfterFinished(_ context.Context, cc *Context, client kubernetes.Interface, _ record.EventRecorder) (Runner, int, error) {
	c, err := ttlafterfinished.New(ttlafterfinished.Options{
		Client: client,
		Jobs:   cc.Informers.Batch().V1().Jobs(),
	})
	if err != nil {
		return nil, 0, err
	}
	return c, workers(cc.Config.TTLAfterFinishedController.ConcurrentTTLSyncs, 5), nil
}

// scaleClient is a scale-subresource client over cfg, with the REST mapper
// it resolves kinds through: the HPA and the disruption controller scale
// whatever owns the pods they watch.
func scaleClient(cfg *rest.Config, client kubernetes.Interface) (scale.ScalesGetter, meta.RESTMapper, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(client.Discovery()))
	if err != nil {
		return nil, nil, fmt.Errorf("scale client: %w", err)
	}
	return scales, mapper, nil
}
