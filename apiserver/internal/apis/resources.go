package apis

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"trireme.dev/api/events"
	"trireme.dev/api/validation"
	"trireme.dev/apiserver/internal/admissionexpr"
	"trireme.dev/apiserver/internal/registry"
	"trireme.dev/apiserver/internal/registry/certificates"
)

// newFn returns a constructor of empty T objects.
func newFn[T any, P interface {
	*T
	runtime.Object
}]() func() runtime.Object {
	return func() runtime.Object { return P(new(T)) }
}

// all is the category `kubectl get all` lists.
var all = []string{"all"}

// apiExtensions is the category upstream gives the kinds that extend the
// API's behaviour (`kubectl get api-extensions`).
var apiExtensions = []string{"api-extensions"}

// eventTTL is how long Events live in etcd, upstream's --event-ttl default.
const eventTTL = 3600

// resources returns the descriptors of every served resource whose
// behaviour the shared strategy and the hooks below fully describe. Pods,
// services and namespaces come from their own packages.
// compiledExpressions refuses admission configurations whose CEL
// expressions do not compile.
var compiledExpressions = registry.Hooks{Validate: func(_ context.Context, obj runtime.Object) field.ErrorList {
	return admissionexpr.Validate(obj)
}}

func resources() []*registry.Resource {
	core, apps, batch := corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion, batchv1.SchemeGroupVersion
	return []*registry.Resource{
		{GroupVersion: core, Name: "configmaps", Kind: "ConfigMap", New: newFn[corev1.ConfigMap](), NewList: newFn[corev1.ConfigMapList](), Namespaced: true, ShortNames: []string{"cm"}},
		{GroupVersion: core, Name: "secrets", Kind: "Secret", New: newFn[corev1.Secret](), NewList: newFn[corev1.SecretList](), Namespaced: true},
		{GroupVersion: core, Name: "serviceaccounts", Kind: "ServiceAccount", New: newFn[corev1.ServiceAccount](), NewList: newFn[corev1.ServiceAccountList](), Namespaced: true, ShortNames: []string{"sa"}},
		{GroupVersion: core, Name: "endpoints", Kind: "Endpoints", New: newFn[corev1.Endpoints](), NewList: newFn[corev1.EndpointsList](), Namespaced: true, CreateOnUpdate: true, ShortNames: []string{"ep"}},
		{GroupVersion: core, Name: "nodes", Kind: "Node", New: newFn[corev1.Node](), NewList: newFn[corev1.NodeList](), Status: true, KeepStatusOnCreate: true, ShortNames: []string{"no"}},
		{GroupVersion: core, Name: "events", Kind: "Event", New: newFn[events.Event](), NewList: newFn[events.EventList](), Namespaced: true, CreateOnUpdate: true, ShortNames: []string{"ev"}, StoreHooks: eventStore},
		{GroupVersion: core, Name: "limitranges", Kind: "LimitRange", New: newFn[corev1.LimitRange](), NewList: newFn[corev1.LimitRangeList](), Namespaced: true, ShortNames: []string{"limits"}},
		{GroupVersion: core, Name: "resourcequotas", Kind: "ResourceQuota", New: newFn[corev1.ResourceQuota](), NewList: newFn[corev1.ResourceQuotaList](), Namespaced: true, Status: true, ShortNames: []string{"quota"}},
		{GroupVersion: core, Name: "persistentvolumes", Kind: "PersistentVolume", New: newFn[corev1.PersistentVolume](), NewList: newFn[corev1.PersistentVolumeList](), Status: true, ShortNames: []string{"pv"},
			Hooks: registry.Hooks{PrepareForCreate: func(_ context.Context, obj runtime.Object) {
				now := metav1.Now()
				obj.(*corev1.PersistentVolume).Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
			}}},
		{GroupVersion: core, Name: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", New: newFn[corev1.PersistentVolumeClaim](), NewList: newFn[corev1.PersistentVolumeClaimList](), Namespaced: true, Status: true, ShortNames: []string{"pvc"},
			Hooks: registry.Hooks{PrepareForCreate: func(_ context.Context, obj runtime.Object) {
				obj.(*corev1.PersistentVolumeClaim).Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
			}}},
		{GroupVersion: core, Name: "podtemplates", Kind: "PodTemplate", New: newFn[corev1.PodTemplate](), NewList: newFn[corev1.PodTemplateList](), Namespaced: true},
		{GroupVersion: core, Name: "replicationcontrollers", Kind: "ReplicationController", New: newFn[corev1.ReplicationController](), NewList: newFn[corev1.ReplicationControllerList](), Namespaced: true, Status: true, Generation: true, Scale: true, ShortNames: []string{"rc"}, Categories: all},

		{GroupVersion: apps, Name: "deployments", Kind: "Deployment", New: newFn[appsv1.Deployment](), NewList: newFn[appsv1.DeploymentList](), Namespaced: true, Status: true, Generation: true, Scale: true, ShortNames: []string{"deploy"}, Categories: all},
		{GroupVersion: apps, Name: "replicasets", Kind: "ReplicaSet", New: newFn[appsv1.ReplicaSet](), NewList: newFn[appsv1.ReplicaSetList](), Namespaced: true, Status: true, Generation: true, Scale: true, ShortNames: []string{"rs"}, Categories: all},
		{GroupVersion: apps, Name: "statefulsets", Kind: "StatefulSet", New: newFn[appsv1.StatefulSet](), NewList: newFn[appsv1.StatefulSetList](), Namespaced: true, Status: true, Generation: true, Scale: true, ShortNames: []string{"sts"}, Categories: all},
		{GroupVersion: apps, Name: "daemonsets", Kind: "DaemonSet", New: newFn[appsv1.DaemonSet](), NewList: newFn[appsv1.DaemonSetList](), Namespaced: true, Status: true, Generation: true, ShortNames: []string{"ds"}, Categories: all},
		{GroupVersion: apps, Name: "controllerrevisions", Kind: "ControllerRevision", New: newFn[appsv1.ControllerRevision](), NewList: newFn[appsv1.ControllerRevisionList](), Namespaced: true},

		{GroupVersion: batch, Name: "jobs", Kind: "Job", New: newFn[batchv1.Job](), NewList: newFn[batchv1.JobList](), Namespaced: true, Status: true, Generation: true, Categories: all,
			Hooks:    registry.Hooks{PrepareForCreate: func(_ context.Context, obj runtime.Object) { generateJobSelector(obj.(*batchv1.Job)) }},
			GCPolicy: rest.OrphanDependents},
		{GroupVersion: batch, Name: "cronjobs", Kind: "CronJob", New: newFn[batchv1.CronJob](), NewList: newFn[batchv1.CronJobList](), Namespaced: true, Status: true, Generation: true, ShortNames: []string{"cj"}, Categories: all},

		{GroupVersion: autoscalingv2.SchemeGroupVersion, Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", New: newFn[autoscalingv2.HorizontalPodAutoscaler](), NewList: newFn[autoscalingv2.HorizontalPodAutoscalerList](), Namespaced: true, Status: true, ShortNames: []string{"hpa"}, Categories: all},
		{GroupVersion: coordinationv1.SchemeGroupVersion, Name: "leases", Kind: "Lease", New: newFn[coordinationv1.Lease](), NewList: newFn[coordinationv1.LeaseList](), Namespaced: true},
		{GroupVersion: discoveryv1.SchemeGroupVersion, Name: "endpointslices", Kind: "EndpointSlice", New: newFn[discoveryv1.EndpointSlice](), NewList: newFn[discoveryv1.EndpointSliceList](), Namespaced: true},
		{GroupVersion: eventsv1.SchemeGroupVersion, Name: "events", Kind: "Event", New: newFn[events.Event](), NewList: newFn[events.EventList](), Namespaced: true, CreateOnUpdate: true, ShortNames: []string{"ev"}, StoreHooks: eventStore,
			// events.k8s.io holds writers to the newer API's stricter rules.
			Hooks: registry.Hooks{
				ValidateCreate: func(obj runtime.Object) field.ErrorList {
					return validation.ValidateEvent(obj.(*events.Event), nil, true)
				},
				ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
					return validation.ValidateEvent(obj.(*events.Event), old.(*events.Event), true)
				},
			}},
		{GroupVersion: schedulingv1.SchemeGroupVersion, Name: "priorityclasses", Kind: "PriorityClass", New: newFn[schedulingv1.PriorityClass](), NewList: newFn[schedulingv1.PriorityClassList](), ShortNames: []string{"pc"}},
		{GroupVersion: policyv1.SchemeGroupVersion, Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", New: newFn[policyv1.PodDisruptionBudget](), NewList: newFn[policyv1.PodDisruptionBudgetList](), Namespaced: true, Status: true, Generation: true, ShortNames: []string{"pdb"}},

		{GroupVersion: networkingv1.SchemeGroupVersion, Name: "ingresses", Kind: "Ingress", New: newFn[networkingv1.Ingress](), NewList: newFn[networkingv1.IngressList](), Namespaced: true, Status: true, Generation: true, ShortNames: []string{"ing"}},
		{GroupVersion: networkingv1.SchemeGroupVersion, Name: "ingressclasses", Kind: "IngressClass", New: newFn[networkingv1.IngressClass](), NewList: newFn[networkingv1.IngressClassList]()},
		{GroupVersion: networkingv1.SchemeGroupVersion, Name: "networkpolicies", Kind: "NetworkPolicy", New: newFn[networkingv1.NetworkPolicy](), NewList: newFn[networkingv1.NetworkPolicyList](), Namespaced: true, Generation: true, ShortNames: []string{"netpol"}},
		{GroupVersion: networkingv1.SchemeGroupVersion, Name: "servicecidrs", Kind: "ServiceCIDR", New: newFn[networkingv1.ServiceCIDR](), NewList: newFn[networkingv1.ServiceCIDRList](), Status: true},
		{GroupVersion: networkingv1.SchemeGroupVersion, Name: "ipaddresses", Kind: "IPAddress", New: newFn[networkingv1.IPAddress](), NewList: newFn[networkingv1.IPAddressList](), ShortNames: []string{"ip"}},

		{GroupVersion: storagev1.SchemeGroupVersion, Name: "storageclasses", Kind: "StorageClass", New: newFn[storagev1.StorageClass](), NewList: newFn[storagev1.StorageClassList](), ShortNames: []string{"sc"}},
		{GroupVersion: storagev1.SchemeGroupVersion, Name: "csidrivers", Kind: "CSIDriver", New: newFn[storagev1.CSIDriver](), NewList: newFn[storagev1.CSIDriverList]()},
		{GroupVersion: storagev1.SchemeGroupVersion, Name: "csinodes", Kind: "CSINode", New: newFn[storagev1.CSINode](), NewList: newFn[storagev1.CSINodeList]()},
		{GroupVersion: storagev1.SchemeGroupVersion, Name: "csistoragecapacities", Kind: "CSIStorageCapacity", New: newFn[storagev1.CSIStorageCapacity](), NewList: newFn[storagev1.CSIStorageCapacityList](), Namespaced: true},
		{GroupVersion: storagev1.SchemeGroupVersion, Name: "volumeattributesclasses", Kind: "VolumeAttributesClass", New: newFn[storagev1.VolumeAttributesClass](), NewList: newFn[storagev1.VolumeAttributesClassList](), ShortNames: []string{"vac"}},
		{GroupVersion: storagev1.SchemeGroupVersion, Name: "volumeattachments", Kind: "VolumeAttachment", New: newFn[storagev1.VolumeAttachment](), NewList: newFn[storagev1.VolumeAttachmentList](), Status: true},
		{GroupVersion: nodev1.SchemeGroupVersion, Name: "runtimeclasses", Kind: "RuntimeClass", New: newFn[nodev1.RuntimeClass](), NewList: newFn[nodev1.RuntimeClassList]()},

		{GroupVersion: flowcontrolv1.SchemeGroupVersion, Name: "flowschemas", Kind: "FlowSchema", New: newFn[flowcontrolv1.FlowSchema](), NewList: newFn[flowcontrolv1.FlowSchemaList](), Status: true},
		{GroupVersion: flowcontrolv1.SchemeGroupVersion, Name: "prioritylevelconfigurations", Kind: "PriorityLevelConfiguration", New: newFn[flowcontrolv1.PriorityLevelConfiguration](), NewList: newFn[flowcontrolv1.PriorityLevelConfigurationList](), Status: true},

		{GroupVersion: resourcev1.SchemeGroupVersion, Name: "deviceclasses", Kind: "DeviceClass", New: newFn[resourcev1.DeviceClass](), NewList: newFn[resourcev1.DeviceClassList](), Generation: true},
		{GroupVersion: resourcev1.SchemeGroupVersion, Name: "resourceclaims", Kind: "ResourceClaim", New: newFn[resourcev1.ResourceClaim](), NewList: newFn[resourcev1.ResourceClaimList](), Namespaced: true, Status: true},
		{GroupVersion: resourcev1.SchemeGroupVersion, Name: "resourceclaimtemplates", Kind: "ResourceClaimTemplate", New: newFn[resourcev1.ResourceClaimTemplate](), NewList: newFn[resourcev1.ResourceClaimTemplateList](), Namespaced: true},
		{GroupVersion: resourcev1.SchemeGroupVersion, Name: "devicetaintrules", Kind: "DeviceTaintRule", New: newFn[resourcev1.DeviceTaintRule](), NewList: newFn[resourcev1.DeviceTaintRuleList](), Status: true, Generation: true,
			Hooks: registry.Hooks{PrepareForCreate: stampDeviceTaint, PrepareForUpdate: restampDeviceTaint}},
		{GroupVersion: resourcev1.SchemeGroupVersion, Name: "resourceslices", Kind: "ResourceSlice", New: newFn[resourcev1.ResourceSlice](), NewList: newFn[resourcev1.ResourceSliceList](), Generation: true},

		{GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration", New: newFn[admissionregistrationv1.ValidatingWebhookConfiguration](), NewList: newFn[admissionregistrationv1.ValidatingWebhookConfigurationList](), Categories: apiExtensions, Hooks: compiledExpressions},
		{GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration", New: newFn[admissionregistrationv1.MutatingWebhookConfiguration](), NewList: newFn[admissionregistrationv1.MutatingWebhookConfigurationList](), Categories: apiExtensions, Hooks: compiledExpressions},
		{GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "validatingadmissionpolicies", Kind: "ValidatingAdmissionPolicy", New: newFn[admissionregistrationv1.ValidatingAdmissionPolicy](), NewList: newFn[admissionregistrationv1.ValidatingAdmissionPolicyList](), Status: true, Generation: true, Categories: apiExtensions, Hooks: compiledExpressions},
		{GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "validatingadmissionpolicybindings", Kind: "ValidatingAdmissionPolicyBinding", New: newFn[admissionregistrationv1.ValidatingAdmissionPolicyBinding](), NewList: newFn[admissionregistrationv1.ValidatingAdmissionPolicyBindingList](), Generation: true, Categories: apiExtensions},
		{GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "mutatingadmissionpolicies", Kind: "MutatingAdmissionPolicy", New: newFn[admissionregistrationv1.MutatingAdmissionPolicy](), NewList: newFn[admissionregistrationv1.MutatingAdmissionPolicyList](), Generation: true, Categories: apiExtensions, Hooks: compiledExpressions},
		{GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "mutatingadmissionpolicybindings", Kind: "MutatingAdmissionPolicyBinding", New: newFn[admissionregistrationv1.MutatingAdmissionPolicyBinding](), NewList: newFn[admissionregistrationv1.MutatingAdmissionPolicyBindingList](), Generation: true, Categories: apiExtensions},

		{GroupVersion: certificatesv1.SchemeGroupVersion, Name: "certificatesigningrequests", Kind: "CertificateSigningRequest", New: newFn[certificatesv1.CertificateSigningRequest](), NewList: newFn[certificatesv1.CertificateSigningRequestList](), Status: true, ShortNames: []string{"csr"}, Hooks: certificates.Hooks},
		{GroupVersion: certificatesv1.SchemeGroupVersion, Name: "clustertrustbundles", Kind: "ClusterTrustBundle", New: newFn[certificatesv1.ClusterTrustBundle](), NewList: newFn[certificatesv1.ClusterTrustBundleList]()},
		{GroupVersion: certificatesv1.SchemeGroupVersion, Name: "podcertificaterequests", Kind: "PodCertificateRequest", New: newFn[certificatesv1.PodCertificateRequest](), NewList: newFn[certificatesv1.PodCertificateRequestList](), Namespaced: true, Status: true},
		{GroupVersion: storagemigrationv1.SchemeGroupVersion, Name: "storageversionmigrations", Kind: "StorageVersionMigration", New: newFn[storagemigrationv1.StorageVersionMigration](), NewList: newFn[storagemigrationv1.StorageVersionMigrationList](), Status: true},
	}
}

// eventStore expires Events from etcd after an hour, as upstream does.
func eventStore(s *genericregistry.Store) {
	s.TTLFunc = func(runtime.Object, uint64, bool) (uint64, error) { return eventTTL, nil }
}

// stampDeviceTaint records when a DeviceTaintRule's taint was added, unless
// the client said; the time is whole seconds as it would be after a round
// trip through the wire format.
func stampDeviceTaint(_ context.Context, obj runtime.Object) {
	t := &obj.(*resourcev1.DeviceTaintRule).Spec.Taint
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	}
}

// restampDeviceTaint moves TimeAdded when the effect changes and the client
// kept the old time, so that tolerationSeconds count from the new effect.
func restampDeviceTaint(ctx context.Context, obj, old runtime.Object) {
	t, was := &obj.(*resourcev1.DeviceTaintRule).Spec.Taint, old.(*resourcev1.DeviceTaintRule).Spec.Taint
	if t.Effect != was.Effect && t.TimeAdded.Equal(was.TimeAdded) {
		t.TimeAdded = nil
	}
	stampDeviceTaint(ctx, obj)
}
