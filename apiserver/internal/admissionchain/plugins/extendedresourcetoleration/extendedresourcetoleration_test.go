package extendedresourcetoleration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

func TestExtendedResourceToleration(t *testing.T) {
	tests := []struct {
		name     string
		requests corev1.ResourceList
		want     []string
	}{
		{"gpu request tolerated", corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}, []string{"example.com/gpu"}},
		{"native resources ignored", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: tt.requests}}}}}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			p := &Plugin{Handler: admission.NewHandler(admission.Create)}
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			if len(pod.Spec.Tolerations) != len(tt.want) {
				t.Fatalf("tolerations %+v, want keys %v", pod.Spec.Tolerations, tt.want)
			}
			for i, k := range tt.want {
				tol := pod.Spec.Tolerations[i]
				if tol.Key != k || tol.Operator != corev1.TolerationOpExists || tol.Effect != corev1.TaintEffectNoSchedule {
					t.Errorf("toleration %+v", tol)
				}
			}
		})
	}
}
