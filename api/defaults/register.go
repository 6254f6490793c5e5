package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaulter ties the defaulting function of one kind to that kind and its
// list type.
type defaulter struct {
	obj, list runtime.Object
	fn        func(any)
}

// kind builds a defaulter from a typed function; the object type is taken
// from fn so a table entry cannot pair a function with the wrong kind.
func kind[T any, PT interface {
	*T
	runtime.Object
}](fn func(*T), list runtime.Object) defaulter {
	return defaulter{obj: PT(new(T)), list: list, fn: func(o any) { fn(o.(*T)) }}
}

// defaulters lists every kind upstream defaults, grouped as the served API
// groups are. A new group (rbac, admissionregistration, certificates) adds
// its entries here.
func defaulters() []defaulter {
	return []defaulter{
		// core/v1
		kind(Pod, &corev1.PodList{}),
		kind(PodTemplate, &corev1.PodTemplateList{}),
		kind(ReplicationController, &corev1.ReplicationControllerList{}),
		kind(Service, &corev1.ServiceList{}),
		kind(Endpoints, &corev1.EndpointsList{}),
		kind(Node, &corev1.NodeList{}),
		kind(Namespace, &corev1.NamespaceList{}),
		kind(LimitRange, &corev1.LimitRangeList{}),
		kind(ResourceQuota, &corev1.ResourceQuotaList{}),
		kind(Secret, &corev1.SecretList{}),
		kind(ConfigMap, &corev1.ConfigMapList{}),
		kind(PersistentVolume, &corev1.PersistentVolumeList{}),
		kind(PersistentVolumeClaim, &corev1.PersistentVolumeClaimList{}),
		// apps/v1
		kind(Deployment, &appsv1.DeploymentList{}),
		kind(ReplicaSet, &appsv1.ReplicaSetList{}),
		kind(StatefulSet, &appsv1.StatefulSetList{}),
		kind(DaemonSet, &appsv1.DaemonSetList{}),
		// batch/v1
		kind(Job, &batchv1.JobList{}),
		kind(CronJob, &batchv1.CronJobList{}),
		// autoscaling/v2
		kind(HorizontalPodAutoscaler, &autoscalingv2.HorizontalPodAutoscalerList{}),
		// discovery.k8s.io/v1
		kind(EndpointSlice, &discoveryv1.EndpointSliceList{}),
		// networking.k8s.io/v1
		kind(NetworkPolicy, &networkingv1.NetworkPolicyList{}),
		kind(IngressClass, &networkingv1.IngressClassList{}),
		// storage.k8s.io/v1
		kind(StorageClass, &storagev1.StorageClassList{}),
		kind(CSIDriver, &storagev1.CSIDriverList{}),
		kind(VolumeAttachment, &storagev1.VolumeAttachmentList{}),
		// scheduling.k8s.io/v1
		kind(PriorityClass, &schedulingv1.PriorityClassList{}),
		// flowcontrol.apiserver.k8s.io/v1
		kind(FlowSchema, &flowcontrolv1.FlowSchemaList{}),
		kind(PriorityLevelConfiguration, &flowcontrolv1.PriorityLevelConfigurationList{}),
		// resource.k8s.io/v1
		kind(ResourceClaim, &resourcev1.ResourceClaimList{}),
		kind(ResourceClaimTemplate, &resourcev1.ResourceClaimTemplateList{}),
		kind(ResourceSlice, &resourcev1.ResourceSliceList{}),
		kind(DeviceTaintRule, &resourcev1.DeviceTaintRuleList{}),
		// rbac.authorization.k8s.io/v1
		kind(RoleBinding, &rbacv1.RoleBindingList{}),
		kind(ClusterRoleBinding, &rbacv1.ClusterRoleBindingList{}),
		// admissionregistration.k8s.io/v1
		kind(ValidatingWebhookConfiguration, &admissionregistrationv1.ValidatingWebhookConfigurationList{}),
		kind(MutatingWebhookConfiguration, &admissionregistrationv1.MutatingWebhookConfigurationList{}),
		kind(ValidatingAdmissionPolicy, &admissionregistrationv1.ValidatingAdmissionPolicyList{}),
		kind(ValidatingAdmissionPolicyBinding, &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{}),
		kind(MutatingAdmissionPolicy, &admissionregistrationv1.MutatingAdmissionPolicyList{}),
		kind(MutatingAdmissionPolicyBinding, &admissionregistrationv1.MutatingAdmissionPolicyBindingList{}),
		// certificates.k8s.io/v1
		kind(CertificateSigningRequest, &certificatesv1.CertificateSigningRequestList{}),
		kind(PodCertificateRequest, &certificatesv1.PodCertificateRequestList{}),
	}
}

// AddToScheme registers a defaulting function for every served external type
// (and the matching list types) with s.
//
// Kinds upstream does not default (Event, ServiceAccount, Lease, Ingress,
// PodDisruptionBudget, RuntimeClass, ...) get no function, exactly as in
// kube-apiserver, so the scheme leaves them untouched.
func AddToScheme(s *runtime.Scheme) error {
	for _, d := range defaulters() {
		s.AddTypeDefaultingFunc(d.obj, d.fn)
		s.AddTypeDefaultingFunc(d.list, eachItem(d.fn))
	}
	return nil
}

// Types returns a new zero value of every type AddToScheme registers a
// defaulting function for, objects and lists alike. It lets callers (and the
// coverage test) check which kinds are defaulted without a scheme lookup,
// which runtime.Scheme does not offer.
func Types() []runtime.Object {
	var out []runtime.Object
	for _, d := range defaulters() {
		out = append(out, d.obj.DeepCopyObject(), d.list.DeepCopyObject())
	}
	return out
}

// eachItem turns an object defaulter into a list defaulter: a list is
// defaulted by defaulting each item in place.
func eachItem(fn func(any)) func(any) {
	return func(list any) {
		obj, ok := list.(runtime.Object)
		if !ok {
			return
		}
		// EachListItem only fails if obj is not a list or fn fails; neither
		// can happen for the registered list types.
		_ = meta.EachListItem(obj, func(item runtime.Object) error {
			fn(item)
			return nil
		})
	}
}
