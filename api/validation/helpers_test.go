package validation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// want is one expected error: its type and field path.
type want struct {
	typ  field.ErrorType
	path string
}

func invalid(path string) want   { return want{field.ErrorTypeInvalid, path} }
func required(path string) want  { return want{field.ErrorTypeRequired, path} }
func forbidden(path string) want { return want{field.ErrorTypeForbidden, path} }
func notSup(path string) want    { return want{field.ErrorTypeNotSupported, path} }
func dup(path string) want       { return want{field.ErrorTypeDuplicate, path} }
func notFound(path string) want  { return want{field.ErrorTypeNotFound, path} }
func tooLong(path string) want   { return want{field.ErrorTypeTooLong, path} }
func tooMany(path string) want   { return want{field.ErrorTypeTooMany, path} }

// expectErrs fails unless errs holds exactly the wanted errors, by type and
// path, in any order.
func expectErrs(t *testing.T, errs field.ErrorList, wants ...want) {
	t.Helper()
	got := map[string]int{}
	for _, e := range errs {
		got[fmt.Sprintf("%s %s", e.Type, e.Field)]++
	}
	missing := false
	for _, w := range wants {
		key := fmt.Sprintf("%s %s", w.typ, w.path)
		if got[key] == 0 {
			missing = true
			t.Errorf("missing error %q", key)
			continue
		}
		got[key]--
	}
	for key, n := range got {
		if n > 0 {
			missing = true
			t.Errorf("unexpected error %q", key)
		}
	}
	if missing {
		t.Logf("all errors:\n%s", dump(errs))
	}
}

// expectDetail checks that some error at path mentions text.
func expectDetail(t *testing.T, errs field.ErrorList, path, text string) {
	t.Helper()
	for _, e := range errs {
		if e.Field == path && strings.Contains(e.Error(), text) {
			return
		}
	}
	t.Errorf("no error at %s containing %q in:\n%s", path, text, dump(errs))
}

func dump(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "  %s\n", e.Error())
	}
	return b.String()
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default"}
}

func clusterMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name}
}

// forUpdate marks a copy of obj's metadata as stored, as updates require.
func stored(m *metav1.ObjectMeta) {
	m.ResourceVersion = "7"
}

func ptr[T any](v T) *T { return &v }

func q(s string) resource.Quantity { return resource.MustParse(s) }

// validContainer is a container as it reads after defaulting.
func validContainer(name string) corev1.Container {
	return corev1.Container{
		Name:                     name,
		Image:                    "registry.k8s.io/pause:3.10",
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
	}
}

func validPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers:                    []corev1.Container{validContainer("app")},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		DNSPolicy:                     corev1.DNSClusterFirst,
		TerminationGracePeriodSeconds: ptr[int64](30),
		SchedulerName:                 corev1.DefaultSchedulerName,
		SecurityContext:               &corev1.PodSecurityContext{},
	}
}

func validPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: meta("web"), Spec: validPodSpec()}
}

func validTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: validPodSpec()}
}
