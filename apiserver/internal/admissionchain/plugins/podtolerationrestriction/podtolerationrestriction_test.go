package podtolerationrestriction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestPodTolerationRestriction(t *testing.T) {
	ns := func(ann map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: ann}}
	}
	gpu := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name      string
		ns        *corev1.Namespace
		pod       []corev1.Toleration
		resources corev1.ResourceRequirements
		wantKeys  []string
		wantErr   string
	}{
		{"namespace default merged", ns(map[string]string{defaultsAnnotation: `[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}]`}), nil, corev1.ResourceRequirements{}, []string{"gpu"}, ""},
		{"memory pressure added for burstable", ns(nil), nil, corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}, []string{corev1.TaintNodeMemoryPressure}, ""},
		{"conflict refused", ns(map[string]string{defaultsAnnotation: `[{"key":"gpu","operator":"Equal","value":"a","effect":"NoSchedule"}]`}), []corev1.Toleration{gpu}, corev1.ResourceRequirements{}, nil, "namespace tolerations and pod tolerations conflict"},
		{"not whitelisted refused", ns(map[string]string{whitelistAnnotation: `[{"key":"ssd","operator":"Exists"}]`}), []corev1.Toleration{gpu}, corev1.ResourceRequirements{}, nil, "conflict with its namespace whitelist"},
		{"whitelisted admitted", ns(map[string]string{whitelistAnnotation: `[{"key":"gpu","operator":"Exists"}]`}), []corev1.Toleration{gpu}, corev1.ResourceRequirements{}, []string{"gpu"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin(&config{})
			admissiontest.Init(t, p, tt.ns)
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tt.pod, Containers: []corev1.Container{{Name: "c", Resources: tt.resources}}}}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			if admissiontest.ErrorWanted(t, admissiontest.Admit(p, a), tt.wantErr) {
				return
			}
			if len(pod.Spec.Tolerations) != len(tt.wantKeys) {
				t.Fatalf("tolerations %+v, want keys %v", pod.Spec.Tolerations, tt.wantKeys)
			}
			for i, k := range tt.wantKeys {
				if pod.Spec.Tolerations[i].Key != k {
					t.Fatalf("tolerations %+v, want keys %v", pod.Spec.Tolerations, tt.wantKeys)
				}
			}
		})
	}
}
