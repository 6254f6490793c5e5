package priority

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func plugin(t *testing.T, objs ...runtime.Object) *Plugin {
	t.Helper()
	p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
	admissiontest.Init(t, p, objs...)
	return p
}

func class(name string, value int32, def bool, policy corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def, PreemptionPolicy: &policy}
}

func TestPriority(t *testing.T) {
	high := class("high", 1000, false, corev1.PreemptLowerPriority)
	def := class("normal", 10, true, corev1.PreemptNever)
	tests := []struct {
		name       string
		classes    []runtime.Object
		spec       corev1.PodSpec
		wantClass  string
		wantValue  int32
		wantPolicy corev1.PreemptionPolicy
		wantErr    string
	}{
		{name: "named class resolved", classes: []runtime.Object{high}, spec: corev1.PodSpec{PriorityClassName: "high"}, wantClass: "high", wantValue: 1000, wantPolicy: corev1.PreemptLowerPriority},
		{name: "global default applied", classes: []runtime.Object{high, def}, wantClass: "normal", wantValue: 10, wantPolicy: corev1.PreemptNever},
		{name: "no default means zero", wantValue: 0, wantPolicy: corev1.PreemptLowerPriority},
		{name: "missing class refused", spec: corev1.PodSpec{PriorityClassName: "nope"}, wantErr: "no PriorityClass with name nope was found"},
		{name: "conflicting value refused", classes: []runtime.Object{high}, spec: corev1.PodSpec{PriorityClassName: "high", Priority: new(int32(5))},
			wantErr: "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugin(t, tt.classes...)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: tt.spec}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			err := p.Admit(context.Background(), a, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Spec.PriorityClassName != tt.wantClass || *pod.Spec.Priority != tt.wantValue || *pod.Spec.PreemptionPolicy != tt.wantPolicy {
				t.Fatalf("class %q priority %d policy %s", pod.Spec.PriorityClassName, *pod.Spec.Priority, *pod.Spec.PreemptionPolicy)
			}
		})
	}
	t.Run("second global default refused", func(t *testing.T) {
		p := plugin(t, def)
		pc := class("other", 5, true, corev1.PreemptLowerPriority)
		a := admission.NewAttributesRecord(pc, nil, schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), "", "other",
			schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
		err := p.Validate(context.Background(), a, nil)
		if err == nil || !strings.Contains(err.Error(), "PriorityClass normal is already marked as default. Only one default can exist") {
			t.Fatalf("got %v", err)
		}
	})
}
