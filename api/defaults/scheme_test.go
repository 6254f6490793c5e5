package defaults_test

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trireme.dev/api/defaults"
	"trireme.dev/api/events"
	"trireme.dev/api/scheme"
)

// decode reads data with the shared codecs the way the API server reads a
// request body: into gv's type when gv is set, into the hub otherwise.
func decode(t *testing.T, data string, gv ...schema.GroupVersion) runtime.Object {
	t.Helper()
	decoder := scheme.Codecs.UniversalDecoder(gv...)
	obj, _, err := decoder.Decode([]byte(data), nil, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return obj
}

func TestDecodeAppliesDefaults(t *testing.T) {
	t.Run("Pod into v1", func(t *testing.T) {
		obj := decode(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
			"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],
			"resources":{"limits":{"cpu":"1"}}}]}}`, corev1.SchemeGroupVersion)
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			t.Fatalf("decoded %T, want *v1.Pod", obj)
		}
		c := pod.Spec.Containers[0]
		checks := map[string]bool{
			"restartPolicy Always":             pod.Spec.RestartPolicy == corev1.RestartPolicyAlways,
			"dnsPolicy ClusterFirst":           pod.Spec.DNSPolicy == corev1.DNSClusterFirst,
			"schedulerName default-scheduler":  pod.Spec.SchedulerName == corev1.DefaultSchedulerName,
			"terminationGracePeriodSeconds 30": pod.Spec.TerminationGracePeriodSeconds != nil && *pod.Spec.TerminationGracePeriodSeconds == 30,
			"enableServiceLinks true":          pod.Spec.EnableServiceLinks != nil && *pod.Spec.EnableServiceLinks,
			"imagePullPolicy Always":           c.ImagePullPolicy == corev1.PullAlways,
			"port protocol TCP":                c.Ports[0].Protocol == corev1.ProtocolTCP,
			"cpu request from limit":           c.Resources.Requests.Cpu().String() == "1",
			"terminationMessagePath":           c.TerminationMessagePath == corev1.TerminationMessagePathDefault,
			"terminationMessagePolicy File":    c.TerminationMessagePolicy == corev1.TerminationMessageReadFile,
			"securityContext set":              pod.Spec.SecurityContext != nil,
		}
		for what, ok := range checks {
			if !ok {
				t.Errorf("decoded pod lacks default %s", what)
			}
		}
	})
	t.Run("Pod into hub", func(t *testing.T) {
		obj := decode(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}`)
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			t.Fatalf("decoded %T, want *v1.Pod", obj)
		}
		if pod.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("imagePullPolicy = %q, want IfNotPresent", pod.Spec.Containers[0].ImagePullPolicy)
		}
	})
	t.Run("PodList items", func(t *testing.T) {
		obj := decode(t, `{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{}},{"metadata":{"name":"b"},"spec":{}}]}`, corev1.SchemeGroupVersion)
		list := obj.(*corev1.PodList)
		for _, p := range list.Items {
			if p.Spec.RestartPolicy != corev1.RestartPolicyAlways {
				t.Errorf("list item %s not defaulted", p.Name)
			}
		}
	})
	t.Run("Deployment", func(t *testing.T) {
		obj := decode(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
			"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},
			"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}`, appsv1.SchemeGroupVersion)
		d := obj.(*appsv1.Deployment)
		switch {
		case d.Spec.Replicas == nil || *d.Spec.Replicas != 1:
			t.Errorf("replicas = %v, want 1", d.Spec.Replicas)
		case d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 10:
			t.Errorf("revisionHistoryLimit = %v, want 10", d.Spec.RevisionHistoryLimit)
		case d.Spec.Strategy.RollingUpdate == nil || *d.Spec.Strategy.RollingUpdate.MaxSurge != intstr.FromString("25%"):
			t.Errorf("strategy = %+v, want RollingUpdate 25%%", d.Spec.Strategy)
		case d.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent:
			t.Errorf("template not defaulted: %+v", d.Spec.Template.Spec.Containers[0])
		case d.Spec.Template.Spec.EnableServiceLinks != nil:
			t.Errorf("template got the Pod-only enableServiceLinks")
		}
	})
	t.Run("Service", func(t *testing.T) {
		obj := decode(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"type":"LoadBalancer","ports":[{"port":443}]}}`, corev1.SchemeGroupVersion)
		s := obj.(*corev1.Service)
		p := s.Spec.Ports[0]
		if p.Protocol != corev1.ProtocolTCP || p.TargetPort != intstr.FromInt32(443) ||
			s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster ||
			s.Spec.AllocateLoadBalancerNodePorts == nil || !*s.Spec.AllocateLoadBalancerNodePorts {
			t.Errorf("service not defaulted: %+v", s.Spec)
		}
	})
	t.Run("events.k8s.io Event into hub", func(t *testing.T) {
		// Events have no upstream defaults; decoding must still convert to
		// the hub without touching the fields.
		obj := decode(t, `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","namespace":"default"},"note":"hi","eventTime":"2026-01-01T00:00:00.000000Z"}`)
		e, ok := obj.(*events.Event)
		if !ok {
			t.Fatalf("decoded %T, want *events.Event", obj)
		}
		if e.Message != "hi" || e.Type != "" {
			t.Errorf("event = %+v", e)
		}
	})
}

// notDefaulted lists the served kinds upstream registers no defaulting for,
// each with where that can be checked. Their List kinds are implied.
var notDefaulted = map[schema.GroupKind]string{
	{Kind: "Event"}: "pkg/apis/core/v1 defaults nothing on Event",
	{Group: eventsv1.GroupName, Kind: "Event"}:                          "pkg/apis/events/v1/zz_generated.defaults.go registers nothing",
	{Kind: "ServiceAccount"}:                                            "no SetDefaults_ServiceAccount in pkg/apis/core/v1",
	{Kind: "ComponentStatus"}:                                           "no defaults; read-only legacy kind",
	{Group: "apps", Kind: "ControllerRevision"}:                         "no SetDefaults_ControllerRevision in pkg/apis/apps/v1; data is opaque",
	{Group: "coordination.k8s.io", Kind: "Lease"}:                       "pkg/apis/coordination/v1 has no defaults.go",
	{Group: "policy", Kind: "PodDisruptionBudget"}:                      "pkg/apis/policy/v1 has no defaulter",
	{Group: "networking.k8s.io", Kind: "Ingress"}:                       "pkg/apis/networking/v1/defaults.go defaults only NetworkPolicy and IngressClass",
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                   "no defaults; the registry manages its status",
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                     "no defaults",
	{Group: "storage.k8s.io", Kind: "CSINode"}:                          "pkg/apis/storage/v1 registers only CSIDriver, StorageClass, VolumeAttachment",
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}:               "pkg/apis/storage/v1 registers only CSIDriver, StorageClass, VolumeAttachment",
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:            "pkg/apis/storage/v1 registers only CSIDriver, StorageClass, VolumeAttachment",
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                        "pkg/apis/node/v1 has no defaulter",
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                     "pkg/apis/resource/v1 defaults claims, templates, slices and taints only",
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                  "pkg/apis/rbac/v1 defaults only bindings and subjects",
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:           "pkg/apis/rbac/v1 defaults only bindings and subjects",
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:          "not served yet; registered only because certificates.k8s.io/v1 holds it",
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}: "pkg/apis/storagemigration/v1 registers no defaulter",
}

// servedResourceKinds returns the kinds of the served group versions that
// are stored resources: those registered together with a List kind.
func servedResourceKinds() map[schema.GroupVersionKind]reflect.Type {
	metaPkg := reflect.TypeOf(metav1.Status{}).PkgPath()
	out := map[schema.GroupVersionKind]reflect.Type{}
	for _, g := range scheme.Groups {
		known := scheme.Scheme.KnownTypes(g.Version)
		for kind, typ := range known {
			if typ.PkgPath() == metaPkg || strings.HasSuffix(kind, "List") {
				continue
			}
			if _, ok := known[kind+"List"]; ok {
				out[g.Version.WithKind(kind)] = typ
			}
		}
	}
	return out
}

func TestEveryServedKindIsDefaulted(t *testing.T) {
	registered := map[reflect.Type]bool{}
	for _, obj := range defaults.Types() {
		registered[reflect.TypeOf(obj).Elem()] = true
	}
	kinds := servedResourceKinds()
	if len(kinds) < 40 {
		t.Fatalf("found only %d served resource kinds; the scheme walk is broken", len(kinds))
	}
	seen := map[schema.GroupKind]bool{}
	for gvk, typ := range kinds {
		seen[gvk.GroupKind()] = true
		listType := scheme.Scheme.KnownTypes(gvk.GroupVersion())[gvk.Kind+"List"]
		reason, exempt := notDefaulted[gvk.GroupKind()]
		switch {
		case exempt && (registered[typ] || registered[listType]):
			t.Errorf("%s is listed as not defaulted upstream (%s) but has a defaulting function", gvk, reason)
		case !exempt && !registered[typ]:
			t.Errorf("%s has no defaulting function and no reason in notDefaulted", gvk)
		case !exempt && !registered[listType]:
			t.Errorf("%sList has no defaulting function", gvk.Kind)
		}
	}
	for gk := range notDefaulted {
		if !seen[gk] {
			t.Errorf("notDefaulted names %s, which is not a served kind", gk)
		}
	}
}

func TestAddToSchemeDefaultsListsItemByItem(t *testing.T) {
	s := runtime.NewScheme()
	if err := defaults.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	list := &corev1.SecretList{Items: []corev1.Secret{{}, {Type: corev1.SecretTypeTLS}}}
	s.Default(list)
	if list.Items[0].Type != corev1.SecretTypeOpaque || list.Items[1].Type != corev1.SecretTypeTLS {
		t.Errorf("list items = %+v, want Opaque then TLS", list.Items)
	}
}
