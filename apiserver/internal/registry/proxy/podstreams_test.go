package proxy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestContainerOf(t *testing.T) {
	one := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "app"}},
	}}
	two := one.DeepCopy()
	two.Spec.Containers = append(two.Spec.Containers, corev1.Container{Name: "side"})
	tests := []struct {
		name, container, want, wantErr string
		pod                            *corev1.Pod
	}{
		{name: "the only container by default", pod: one, want: "app"},
		{name: "an init container by name", pod: one, container: "init", want: "init"},
		{name: "a name is required with several", pod: two, wantErr: "a container name must be specified for pod p, choose one of: [app side]"},
		{name: "unknown container", pod: one, container: "nope", wantErr: "container nope is not valid for pod p"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := containerOf(tc.pod, tc.container)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
