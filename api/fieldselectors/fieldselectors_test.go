package fieldselectors_test

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"trireme.dev/api/events"
	"trireme.dev/api/fieldselectors"
	"trireme.dev/api/scheme"
)

func nsMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }

func withMeta(name, namespace string, set fields.Set) fields.Set {
	set["metadata.name"] = name
	if namespace != "" {
		set["metadata.namespace"] = namespace
	}
	return set
}

func TestFields(t *testing.T) {
	event := events.Event{
		ObjectMeta: nsMeta("e"),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web", UID: "u1", APIVersion: "v1",
			ResourceVersion: "7", FieldPath: "spec.containers{app}"},
		Reason: "Pulled", Type: corev1.EventTypeNormal, ReportingController: "kubelet",
	}
	eventWant := withMeta("e", "ns", fields.Set{
		"involvedObject.kind": "Pod", "involvedObject.namespace": "ns", "involvedObject.name": "web", "involvedObject.uid": "u1",
		"involvedObject.apiVersion": "v1", "involvedObject.resourceVersion": "7", "involvedObject.fieldPath": "spec.containers{app}",
		"reason": "Pulled", "reportingComponent": "kubelet", "source": "kubelet", "type": "Normal",
	})
	var eventV1 eventsv1.Event
	events.ToEventsV1(&event, &eventV1)

	tests := []struct {
		name string
		obj  runtime.Object
		want fields.Set
	}{
		{"pod fields", &corev1.Pod{ObjectMeta: nsMeta("web"),
			Spec: corev1.PodSpec{NodeName: "n1", RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
				ServiceAccountName: "default", HostNetwork: true},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "fd00::5"}}, NominatedNodeName: "n2"}},
			withMeta("web", "ns", fields.Set{"spec.nodeName": "n1", "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
				"spec.serviceAccountName": "default", "spec.hostNetwork": "true", "status.phase": "Running", "status.podIP": "10.0.0.5",
				"status.nominatedNodeName": "n2"})},
		{"pod fields empty", &corev1.Pod{ObjectMeta: nsMeta("p")},
			withMeta("p", "ns", fields.Set{"spec.nodeName": "", "spec.restartPolicy": "", "spec.schedulerName": "",
				"spec.serviceAccountName": "", "spec.hostNetwork": "false", "status.phase": "", "status.podIP": "", "status.nominatedNodeName": ""})},
		{"node fields cluster scoped", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Unschedulable: true}},
			withMeta("n1", "", fields.Set{"spec.unschedulable": "true"})},
		{"namespace fields", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			withMeta("kube-system", "", fields.Set{"status.phase": "Terminating"})},
		{"secret fields", &corev1.Secret{ObjectMeta: nsMeta("s"), Type: corev1.SecretTypeTLS},
			withMeta("s", "ns", fields.Set{"type": "kubernetes.io/tls"})},
		{"service fields", &corev1.Service{ObjectMeta: nsMeta("svc"), Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Type: corev1.ServiceTypeClusterIP}},
			withMeta("svc", "ns", fields.Set{"spec.clusterIP": "10.96.0.1", "spec.type": "ClusterIP"})},
		{"replicationcontroller fields", &corev1.ReplicationController{ObjectMeta: nsMeta("rc"), Status: corev1.ReplicationControllerStatus{Replicas: 3}},
			withMeta("rc", "ns", fields.Set{"status.replicas": "3"})},
		{"replicaset fields", &appsv1.ReplicaSet{ObjectMeta: nsMeta("rs"), Status: appsv1.ReplicaSetStatus{Replicas: 0}},
			withMeta("rs", "ns", fields.Set{"status.replicas": "0"})},
		{"job fields", &batchv1.Job{ObjectMeta: nsMeta("j"), Status: batchv1.JobStatus{Succeeded: 2}},
			withMeta("j", "ns", fields.Set{"status.successful": "2"})},
		{"event hub fields", &event, eventWant},
		{"event core v1 fields", (*corev1.Event)(&event), eventWant},
		{"event events.k8s.io fields", &eventV1, eventWant},
		{"event source prefers deprecated source", &events.Event{ObjectMeta: nsMeta("e"), Source: corev1.EventSource{Component: "kubelet"}, ReportingController: "rc"},
			withMeta("e", "ns", fields.Set{"involvedObject.kind": "", "involvedObject.namespace": "", "involvedObject.name": "", "involvedObject.uid": "",
				"involvedObject.apiVersion": "", "involvedObject.resourceVersion": "", "involvedObject.fieldPath": "",
				"reason": "", "reportingComponent": "rc", "source": "kubelet", "type": ""})},
		{"resourceslice fields", &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com"}},
			withMeta("s", "", fields.Set{"spec.nodeName": "", "spec.driver": "gpu.example.com"})},
		{"certificatesigningrequest fields", &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr"},
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kubelet-serving"}},
			withMeta("csr", "", fields.Set{"spec.signerName": "kubernetes.io/kubelet-serving"})},
		{"podcertificaterequest fields", &certificatesv1.PodCertificateRequest{ObjectMeta: nsMeta("req-1"),
			Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/s", PodName: "web", NodeName: "n1"}},
			withMeta("req-1", "ns", fields.Set{"spec.signerName": "example.com/s", "spec.podName": "web", "spec.nodeName": "n1"})},
		{"configmap metadata only", &corev1.ConfigMap{ObjectMeta: nsMeta("cm")}, withMeta("cm", "ns", fields.Set{})},
		{"namespaced kind keeps empty namespace", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}},
			fields.Set{"metadata.name": "cm", "metadata.namespace": ""}},
		{"priorityclass cluster scoped", &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}}, withMeta("high", "", fields.Set{})},
		{"object without metadata", &metav1.Status{}, fields.Set{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldselectors.Fields(tt.obj); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fields =\n %v\nwant\n %v", got, tt.want)
			}
		})
	}
}

func TestConvertFieldLabel(t *testing.T) {
	gvk := func(group, version, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
	}
	pod := gvk("", "v1", "Pod")
	tests := []struct {
		name      string
		gvk       schema.GroupVersionKind
		label     string
		wantLabel string
		wantErr   string
	}{
		{"pods spec.nodeName", pod, "spec.nodeName", "spec.nodeName", ""},
		{"pods spec.foo", pod, "spec.foo", "", "field label not supported: spec.foo"},
		{"pods spec.host is the old spec.nodeName", pod, "spec.host", "spec.nodeName", ""},
		{"pods status.podIPs", pod, "status.podIPs", "status.podIPs", ""},
		{"pods metadata.namespace", pod, "metadata.namespace", "metadata.namespace", ""},
		{"nodes spec.unschedulable", gvk("", "v1", "Node"), "spec.unschedulable", "spec.unschedulable", ""},
		{"nodes metadata.namespace", gvk("", "v1", "Node"), "metadata.namespace", "", "field label not supported: metadata.namespace"},
		{"namespaces status.phase", gvk("", "v1", "Namespace"), "status.phase", "status.phase", ""},
		{"secrets type", gvk("", "v1", "Secret"), "type", "type", ""},
		{"services spec.type", gvk("", "v1", "Service"), "spec.type", "spec.type", ""},
		{"replicationcontrollers status.replicas", gvk("", "v1", "ReplicationController"), "status.replicas", "status.replicas", ""},
		{"core events involvedObject.name", gvk("", "v1", "Event"), "involvedObject.name", "involvedObject.name", ""},
		{"core events regarding.name", gvk("", "v1", "Event"), "regarding.name", "", "field label not supported: regarding.name"},
		{"events.k8s.io regarding.name", gvk("events.k8s.io", "v1", "Event"), "regarding.name", "involvedObject.name", ""},
		{"events.k8s.io reportingController", gvk("events.k8s.io", "v1", "Event"), "reportingController", "reportingComponent", ""},
		{"events.k8s.io source", gvk("events.k8s.io", "v1", "Event"), "source", "source", ""},
		{"events.k8s.io involvedObject.name", gvk("events.k8s.io", "v1", "Event"), "involvedObject.name", "", "field label not supported: involvedObject.name"},
		{"jobs status.successful", gvk("batch", "v1", "Job"), "status.successful", "status.successful", ""},
		{"jobs status.succeeded", gvk("batch", "v1", "Job"), "status.succeeded", "", `field label "status.succeeded" not supported for batchv1.Job`},
		{"resourceslices spec.driver", gvk("resource.k8s.io", "v1", "ResourceSlice"), "spec.driver", "spec.driver", ""},
		{"resourceslices spec.pool.name", gvk("resource.k8s.io", "v1", "ResourceSlice"), "spec.pool.name", "",
			"field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name"},
		{"podcertificaterequests spec.signerName", gvk("certificates.k8s.io", "v1", "PodCertificateRequest"), "spec.signerName", "spec.signerName", ""},
		{"podcertificaterequests spec.nodeName", gvk("certificates.k8s.io", "v1", "PodCertificateRequest"), "spec.nodeName", "spec.nodeName", ""},
		{"podcertificaterequests spec.podName", gvk("certificates.k8s.io", "v1", "PodCertificateRequest"), "spec.podName", "spec.podName", ""},
		{"podcertificaterequests metadata.namespace", gvk("certificates.k8s.io", "v1", "PodCertificateRequest"), "metadata.namespace", "metadata.namespace", ""},
		{"podcertificaterequests status", gvk("certificates.k8s.io", "v1", "PodCertificateRequest"), "status.certificateChain", "", "field label not supported: status.certificateChain"},
		{"configmaps metadata.name", gvk("", "v1", "ConfigMap"), "metadata.name", "metadata.name", ""},
		{"configmaps data", gvk("", "v1", "ConfigMap"), "data", "", `"data" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"replicasets status.replicas", gvk("apps", "v1", "ReplicaSet"), "status.replicas", "",
			`"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"priorityclasses metadata.namespace", gvk("scheduling.k8s.io", "v1", "PriorityClass"), "metadata.namespace", "metadata.namespace", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			label, value, err := scheme.Scheme.ConvertFieldLabel(tt.gvk, tt.label, "x")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if label != tt.wantLabel || value != "x" {
				t.Errorf("got %q=%q, want %q=x", label, value, tt.wantLabel)
			}
		})
	}
}

// TestConvertedLabelsAreFields checks that each label a kind with its own
// fields accepts converts to a label Fields returns for that kind, apart
// from the ones upstream accepts without a field behind them.
func TestConvertedLabelsAreFields(t *testing.T) {
	acceptedWithoutField := map[string]bool{"status.podIPs": true}
	tests := []struct {
		gvk    schema.GroupVersionKind
		labels []string
		obj    runtime.Object
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, []string{"metadata.name", "metadata.namespace", "spec.nodeName", "spec.host",
			"spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
			"status.podIPs", "status.nominatedNodeName"}, &corev1.Pod{}},
		{schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, []string{"reason", "regarding.kind", "regarding.namespace",
			"regarding.name", "regarding.uid", "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath",
			"reportingController", "source", "type", "metadata.namespace", "metadata.name"}, &events.Event{}},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, []string{"metadata.name", "metadata.namespace", "status.successful"}, &batchv1.Job{}},
		{schema.GroupVersionKind{Group: "certificates.k8s.io", Version: "v1", Kind: "PodCertificateRequest"}, []string{"metadata.name", "spec.signerName", "spec.podName", "spec.nodeName"}, &certificatesv1.PodCertificateRequest{}},
	}
	for _, tt := range tests {
		t.Run("converted labels of "+tt.gvk.Kind+" "+tt.gvk.Group, func(t *testing.T) {
			set := fieldselectors.Fields(tt.obj)
			for _, l := range tt.labels {
				internal, _, err := scheme.Scheme.ConvertFieldLabel(tt.gvk, l, "")
				if err != nil {
					t.Errorf("%s rejected: %v", l, err)
					continue
				}
				if _, ok := set[internal]; !ok && !acceptedWithoutField[l] {
					t.Errorf("%s converts to %s, which Fields does not return", l, internal)
				}
			}
		})
	}
}

func TestAddToSchemeOnFreshScheme(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, eventsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := fieldselectors.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, tt := range []struct {
		gvk   schema.GroupVersionKind
		label string
	}{
		{corev1.SchemeGroupVersion.WithKind("Pod"), "spec.nodeName"},
		{eventsv1.SchemeGroupVersion.WithKind("Event"), "regarding.name"},
		{batchv1.SchemeGroupVersion.WithKind("Job"), "status.successful"},
	} {
		t.Run("fresh scheme accepts "+tt.gvk.Kind+" "+tt.label, func(t *testing.T) {
			// The default conversion would refuse these labels: accepting them
			// shows the kind's own conversion was registered.
			if _, _, err := s.ConvertFieldLabel(tt.gvk, tt.label, "x"); err != nil {
				t.Error(err)
			}
		})
	}
}
