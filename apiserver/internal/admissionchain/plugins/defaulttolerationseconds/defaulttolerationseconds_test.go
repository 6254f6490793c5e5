package defaulttolerationseconds

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

func TestDefaultTolerationSeconds(t *testing.T) {
	tests := []struct {
		name        string
		tolerations []corev1.Toleration
		want        int
	}{
		{"both tolerations added", nil, 2},
		{"own not-ready toleration kept", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, 2},
		{"tolerate-everything pod untouched", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, 1},
		{"NoSchedule toleration does not count", []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Tolerations: tt.tolerations}}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			p := &Plugin{Handler: admission.NewHandler(admission.Create), seconds: defaultSeconds}
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			if len(pod.Spec.Tolerations) != tt.want {
				t.Fatalf("tolerations %+v, want %d", pod.Spec.Tolerations, tt.want)
			}
			for _, tol := range pod.Spec.Tolerations {
				if tol.TolerationSeconds != nil && *tol.TolerationSeconds != 300 {
					t.Errorf("toleration %+v, want 300s", tol)
				}
			}
		})
	}
}

// TestDefaultTolerationSecondsOnUpdate: the registered plugin handles
// updates as upstream's does, so that a pod update replacing the
// tolerations keeps the defaults, which validation requires it to keep.
func TestDefaultTolerationSecondsOnUpdate(t *testing.T) {
	plugins := admission.NewPlugins()
	Register(plugins)
	pi, err := plugins.InitPlugin(Name, nil, admission.PluginInitializers{})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []admission.Operation{admission.Create, admission.Update} {
		t.Run(string(op), func(t *testing.T) {
			if !pi.Handles(op) {
				t.Fatalf("plugin does not handle %s", op)
			}
			old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}}}}
			a := admission.NewAttributesRecord(pod, old, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", op, nil, false, nil)
			if err := pi.(admission.MutationInterface).Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			if len(pod.Spec.Tolerations) != 3 {
				t.Errorf("tolerations %+v, want foo and the two defaults", pod.Spec.Tolerations)
			}
		})
	}
}
