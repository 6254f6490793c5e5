package runtimeclass

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestRuntimeClass(t *testing.T) {
	gvisor := &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gvisor"},
		Handler:    "runsc",
		Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "gvisor"}, Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}}},
	}
	p := &Plugin{Handler: admission.NewHandler(admission.Create)}
	admissiontest.Init(t, p, gvisor)
	tests := []struct {
		name    string
		spec    corev1.PodSpec
		wantErr string
	}{
		{"class applied", corev1.PodSpec{RuntimeClassName: new("gvisor")}, ""},
		{"missing class refused", corev1.PodSpec{RuntimeClassName: new("kata")}, `pod rejected: RuntimeClass "kata" not found`},
		{"conflicting node selector refused", corev1.PodSpec{RuntimeClassName: new("gvisor"), NodeSelector: map[string]string{"sandbox": "kata"}},
			"conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata"},
		{"foreign overhead refused", corev1.PodSpec{RuntimeClassName: new("gvisor"), Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			"pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tt.spec}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			if admissiontest.ErrorWanted(t, admissiontest.Admit(p, a), tt.wantErr) {
				return
			}
			if pod.Spec.Overhead.Memory().String() != "64Mi" || pod.Spec.NodeSelector["sandbox"] != "gvisor" || len(pod.Spec.Tolerations) != 1 {
				t.Fatalf("pod spec %+v", pod.Spec)
			}
		})
	}
}
