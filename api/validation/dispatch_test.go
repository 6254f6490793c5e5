package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"trireme.dev/api/events"
)

func TestDispatchUnknownTypes(t *testing.T) {
	for name, obj := range map[string]runtime.Object{
		"unregistered kind":      &extensionsv1beta1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "!!"}},
		"options kind":           &metav1.Status{},
		"nil interface":          nil,
		"typed nil pointer":      (*corev1.Pod)(nil),
		"list of a known kind":   &corev1.PodList{},
		"unstructured-like list": &metav1.List{},
	} {
		t.Run(name, func(t *testing.T) {
			if errs := ValidateCreate(obj); errs != nil {
				t.Errorf("create: %v", errs)
			}
			if errs := ValidateUpdate(obj, obj); errs != nil {
				t.Errorf("update: %v", errs)
			}
			if errs := ValidateStatusUpdate(obj, obj); errs != nil {
				t.Errorf("status: %v", errs)
			}
			if NameFunc(obj) == nil {
				t.Error("NameFunc returned nil")
			}
		})
	}
}

func TestDispatchMismatchedUpdate(t *testing.T) {
	for name, old := range map[string]runtime.Object{
		"other kind":    &corev1.Service{},
		"nil old":       nil,
		"typed nil old": (*corev1.Pod)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			expectErrs(t, ValidateUpdate(validPod(), old), want{field.ErrorTypeInternal, "<nil>"})
			expectErrs(t, ValidateStatusUpdate(validPod(), old), want{field.ErrorTypeInternal, "<nil>"})
		})
	}
}

func TestNameFunc(t *testing.T) {
	cases := []struct {
		name   string
		obj    runtime.Object
		value  string
		prefix bool
		ok     bool
	}{
		{"namespace accepts dns label", &corev1.Namespace{}, "kube-system", false, true},
		{"namespace rejects dots", &corev1.Namespace{}, "a.b", false, false},
		{"service rejects leading digit", &corev1.Service{}, "1web", false, false},
		{"service accepts dns-1035 label", &corev1.Service{}, "web", false, true},
		{"service generateName may end with dash", &corev1.Service{}, "web-", true, true},
		{"pod accepts subdomain", &corev1.Pod{}, "web.v1", false, true},
		{"pod rejects upper case", &corev1.Pod{}, "Web", false, false},
		{"event hub accepts subdomain", &events.Event{}, "web.17a2b", false, true},
		{"unknown kind falls back to subdomain", &extensionsv1beta1.Ingress{}, "a.b", false, true},
		{"rbac kinds accept path segments", &rbacv1.Role{}, "system:a.b", false, true},
		{"rbac kinds reject slashes", &rbacv1.ClusterRole{}, "a/b", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs := NameFunc(tc.obj)(tc.value, tc.prefix)
			if (len(msgs) == 0) != tc.ok {
				t.Errorf("NameFunc(%T)(%q, %v) = %v, want ok=%v", tc.obj, tc.value, tc.prefix, msgs, tc.ok)
			}
		})
	}
}

func TestObjectMetaEverywhere(t *testing.T) {
	t.Run("name required", func(t *testing.T) {
		p := validPod()
		p.Name = ""
		expectErrs(t, ValidateCreate(p), required("metadata.name"))
	})
	t.Run("bad generateName", func(t *testing.T) {
		p := validPod()
		p.GenerateName = "Web-"
		expectErrs(t, ValidateCreate(p), invalid("metadata.generateName"))
	})
	t.Run("namespace required for namespaced kinds", func(t *testing.T) {
		p := validPod()
		p.Namespace = ""
		expectErrs(t, ValidateCreate(p), required("metadata.namespace"))
	})
	t.Run("namespace forbidden for cluster kinds", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "default"}}
		expectErrs(t, ValidateCreate(ns), forbidden("metadata.namespace"))
	})
	t.Run("bad label", func(t *testing.T) {
		p := validPod()
		p.Labels = map[string]string{"app": "not ok"}
		expectErrs(t, ValidateCreate(p), invalid("metadata.labels"))
	})
	t.Run("annotations over 256KiB", func(t *testing.T) {
		p := validPod()
		p.Annotations = map[string]string{"big": strings.Repeat("x", 256*1024)}
		expectErrs(t, ValidateCreate(p), tooLong("metadata.annotations"))
	})
	t.Run("update needs resourceVersion and keeps name", func(t *testing.T) {
		old := validPod()
		stored(&old.ObjectMeta)
		p := validPod()
		p.Name = "other"
		expectErrs(t, ValidateUpdate(p, old), invalid("metadata.resourceVersion"), invalid("metadata.name"))
	})
}
