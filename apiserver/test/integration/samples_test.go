package integration

import (
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testpki"
)

// Sample objects, one per served kind, written as a user would write them:
// only the fields upstream requires, the rest left to server defaulting.
// Each takes the namespace the object will live in (for references that
// must agree with it) and leaves name and namespace to the caller.

var webLabels = map[string]string{"app": "web"}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}}
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: webLabels}, Spec: podSpec()}
}

func sampleConfigMap(string) runtime.Object {
	return &corev1.ConfigMap{Data: map[string]string{"key": "value"}}
}

func sampleSecret(string) runtime.Object {
	return &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"key": []byte("value")}}
}

func sampleServiceAccount(string) runtime.Object { return &corev1.ServiceAccount{} }

func sampleEndpoints(string) runtime.Object {
	return &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}},
		Ports:     []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
	}}}
}

func sampleNode(string) runtime.Object {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubernetes.io/os": "linux"}}}
}

func sampleCoreEvent(ns string) runtime.Object {
	now := metav1.Now()
	return &corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-0", APIVersion: "v1"},
		Reason:         "Started", Message: "Started container web", Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
}

func sampleEventsV1Event(ns string) runtime.Object {
	return &eventsv1.Event{
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "trireme.dev/integration", ReportingInstance: "integration-1",
		Action: "Testing", Reason: "Tested", Note: "tested by the integration suite", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-0", APIVersion: "v1"},
	}
}

func sampleLimitRange(string) runtime.Object {
	return &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
		DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
	}}}}
}

func sampleResourceQuota(string) runtime.Object {
	return &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}
}

func samplePersistentVolume(string) runtime.Object {
	return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv"}},
	}}
}

func samplePersistentVolumeClaim(string) runtime.Object {
	return &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
}

func samplePodTemplate(string) runtime.Object { return &corev1.PodTemplate{Template: podTemplate()} }

func sampleReplicationController(string) runtime.Object {
	t := podTemplate()
	return &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](1), Selector: webLabels, Template: &t}}
}

func samplePod(string) runtime.Object { return &corev1.Pod{Spec: podSpec()} }

func sampleService(string) runtime.Object {
	return &corev1.Service{Spec: corev1.ServiceSpec{
		Selector: webLabels,
		Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
	}}
}

func sampleNamespace(string) runtime.Object { return &corev1.Namespace{} }

func sampleDeployment(string) runtime.Object {
	return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: podTemplate(),
	}}
}

func sampleReplicaSet(string) runtime.Object {
	return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: podTemplate(),
	}}
}

func sampleStatefulSet(string) runtime.Object {
	return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To[int32](1), ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: podTemplate(),
	}}
}

func sampleDaemonSet(string) runtime.Object {
	return &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: podTemplate(),
	}}
}

func sampleControllerRevision(string) runtime.Object {
	return &appsv1.ControllerRevision{Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{}}}`)}}
}

func sampleJob(string) runtime.Object {
	t := podTemplate()
	t.Labels = nil
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{Spec: batchv1.JobSpec{Template: t}}
}

func sampleCronJob(string) runtime.Object {
	t := podTemplate()
	t.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	return &batchv1.CronJob{Spec: batchv1.CronJobSpec{
		Schedule:    "*/5 * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: t}},
	}}
}

func sampleHorizontalPodAutoscaler(string) runtime.Object {
	return &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MaxReplicas:    3,
	}}
}

func sampleHorizontalPodAutoscalerV1(string) runtime.Object {
	return &autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef:                 autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MaxReplicas:                    3,
		TargetCPUUtilizationPercentage: ptr.To[int32](50),
	}}
}

func sampleStorageVersionMigration(string) runtime.Object {
	return &storagemigrationv1.StorageVersionMigration{Spec: storagemigrationv1.StorageVersionMigrationSpec{
		Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"},
	}}
}

func sampleLease(string) runtime.Object {
	return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("holder"), LeaseDurationSeconds: ptr.To[int32](15)}}
}

func sampleEndpointSlice(string) runtime.Object {
	return &discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

func samplePriorityClass(string) runtime.Object {
	return &schedulingv1.PriorityClass{Value: 1000, Description: "integration test class"}
}

func samplePodDisruptionBudget(string) runtime.Object {
	return &policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: webLabels},
	}}
}

func sampleIngress(string) runtime.Object {
	return &networkingv1.Ingress{Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}},
	}}}
}

func sampleIngressClass(string) runtime.Object {
	return &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress-controller"}}
}

func sampleNetworkPolicy(string) runtime.Object {
	return &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: webLabels}, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
	}}
}

func sampleServiceCIDR(string) runtime.Object {
	return &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.250.0.0/24"}}}
}

func sampleIPAddress(ns string) runtime.Object {
	return &networkingv1.IPAddress{Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: ns, Name: "web"}}}
}

// ipAddressName returns the nth IP of 192.168.0.0/16, far from the service
// range, as IPAddress names must be IPs.
func ipAddressName(n int) string { return fmt.Sprintf("192.168.%d.%d", n/250%250, n%250+1) }

func sampleStorageClass(string) runtime.Object {
	return &storagev1.StorageClass{Provisioner: "example.com/disk"}
}

func sampleCSIDriver(string) runtime.Object { return &storagev1.CSIDriver{} }

func sampleCSINode(string) runtime.Object {
	return &storagev1.CSINode{Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "disk.example.com", NodeID: "node-1"}}}}
}

func sampleVolumeAttachment(string) runtime.Object {
	return &storagev1.VolumeAttachment{Spec: storagev1.VolumeAttachmentSpec{
		Attacher: "disk.example.com", NodeName: "node-1",
		Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")},
	}}
}

func sampleRuntimeClass(string) runtime.Object { return &nodev1.RuntimeClass{Handler: "runc"} }

func sampleFlowSchema(string) runtime.Object {
	return &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
		MatchingPrecedence:         5000,
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "integration-nobody"}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
				Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"},
			}},
		}},
	}}
}

func samplePriorityLevelConfiguration(string) runtime.Object {
	return &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](5),
			LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
		},
	}}
}

func sampleDeviceClass(string) runtime.Object { return &resourcev1.DeviceClass{} }

func deviceClaimSpec() resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"},
	}}}}
}

func sampleResourceClaim(string) runtime.Object {
	return &resourcev1.ResourceClaim{Spec: deviceClaimSpec()}
}

func sampleResourceClaimTemplate(string) runtime.Object {
	return &resourcev1.ResourceClaimTemplate{Spec: resourcev1.ResourceClaimTemplateSpec{Spec: deviceClaimSpec()}}
}

func sampleDeviceTaintRule(string) runtime.Object {
	return &resourcev1.DeviceTaintRule{Spec: resourcev1.DeviceTaintRuleSpec{
		Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}
}

func sampleResourceSlice(string) runtime.Object {
	return &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{
		Driver:   "gpu.example.com",
		Pool:     resourcev1.ResourcePool{Name: "pool-1", ResourceSliceCount: 1},
		NodeName: ptr.To("node-1"),
		Devices:  []resourcev1.Device{{Name: "gpu-0"}},
	}}
}

func sampleCSIStorageCapacity(string) runtime.Object {
	return &storagev1.CSIStorageCapacity{StorageClassName: "standard", Capacity: ptr.To(resource.MustParse("10Gi"))}
}

func sampleVolumeAttributesClass(string) runtime.Object {
	return &storagev1.VolumeAttributesClass{DriverName: "disk.example.com", Parameters: map[string]string{"iops": "3000"}}
}

var podReader = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}

func sampleRole(string) runtime.Object { return &rbacv1.Role{Rules: podReader} }

func sampleClusterRole(string) runtime.Object { return &rbacv1.ClusterRole{Rules: podReader} }

func sampleRoleBinding(string) runtime.Object {
	return &rbacv1.RoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "jane"}},
	}
}

func sampleClusterRoleBinding(string) runtime.Object {
	return &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "readers"}},
	}
}

// Webhooks and policies whose rules match nothing: stored and served, never
// called, so they cannot disturb the other tests.
var noSideEffects = admissionregistrationv1.SideEffectClassNone

func sampleValidatingWebhookConfiguration(string) runtime.Object {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
		Name: "check.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://check.example.com/validate")},
		SideEffects: &noSideEffects, AdmissionReviewVersions: []string{"v1"},
	}}}
}

func sampleMutatingWebhookConfiguration(string) runtime.Object {
	return &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{
		Name: "mutate.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://mutate.example.com/mutate")},
		SideEffects: &noSideEffects, AdmissionReviewVersions: []string{"v1"},
	}}}
}

var matchNothing = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
	RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
	},
}}}

func sampleValidatingAdmissionPolicy(string) runtime.Object {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchNothing,
		Validations:      []admissionregistrationv1.Validation{{Expression: "object.metadata.name != 'forbidden'"}},
	}}
}

func sampleValidatingAdmissionPolicyBinding(string) runtime.Object {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName: "no-such-policy", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
	}}
}

func sampleMutatingAdmissionPolicy(string) runtime.Object {
	return &admissionregistrationv1.MutatingAdmissionPolicy{Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints:   matchNothing,
		ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		Mutations: []admissionregistrationv1.Mutation{{
			PatchType:          admissionregistrationv1.PatchTypeApplyConfiguration,
			ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "Object{metadata: Object.metadata{labels: {'seen': 'yes'}}}"},
		}},
	}}
}

func sampleMutatingAdmissionPolicyBinding(string) runtime.Object {
	return &admissionregistrationv1.MutatingAdmissionPolicyBinding{Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "no-such-policy"}}
}

// sampleCSR asks the kube-apiserver-client signer for an ordinary user.
func sampleCSR(string) runtime.Object {
	return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Request:    testpki.NewRequest(testpki.Cert{CommonName: "jane", Organization: []string{"dev"}}).PEM,
		SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
	}}
}

// samplePodCertificateRequest is what a kubelet asks for a pod: a key's
// stub request, for a signer of the mesh's own.
func samplePodCertificateRequest(string) runtime.Object {
	return &certificatesv1.PodCertificateRequest{Spec: certificatesv1.PodCertificateRequestSpec{
		SignerName: "example.com/mesh", PodName: "web", PodUID: "pod-uid", ServiceAccountName: "default", ServiceAccountUID: "sa-uid",
		NodeName: "node-a", NodeUID: "node-uid", StubPKCS10Request: testpki.NewRequest(testpki.Cert{}).DER,
	}}
}

// sampleClusterTrustBundle publishes a fresh self-signed CA with no signer,
// which needs no attest permission.
func sampleClusterTrustBundle(string) runtime.Object {
	return &certificatesv1.ClusterTrustBundle{Spec: certificatesv1.ClusterTrustBundleSpec{
		TrustBundle: string(testpki.NewCA("sample-root").CertPEM),
	}}
}
