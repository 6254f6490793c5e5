package alwayspullimages

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

func TestAlwaysPullImages(t *testing.T) {
	attrs := func(pod *corev1.Pod) admission.Attributes {
		return admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
			corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
	}
	p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
	t.Run("admit sets Always everywhere", func(t *testing.T) {
		pod := &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", ImagePullPolicy: corev1.PullNever}},
			Containers:     []corev1.Container{{Name: "c", ImagePullPolicy: corev1.PullIfNotPresent}},
		}}
		if err := p.Admit(context.Background(), attrs(pod), nil); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.InitContainers[0].ImagePullPolicy != corev1.PullAlways || pod.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
			t.Fatalf("policies not Always: %+v", pod.Spec)
		}
	})
	t.Run("validate refuses other policy", func(t *testing.T) {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", ImagePullPolicy: corev1.PullNever}}}}
		if err := p.Validate(context.Background(), attrs(pod), nil); err == nil {
			t.Fatal("Never pull policy admitted")
		}
	})
}
