package pullsecrets

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestRegistryMatches(t *testing.T) {
	tests := []struct {
		key, image string
		want       bool
	}{
		{"https://index.docker.io/v1/", "busybox", true},
		{"docker.io", "library/busybox:1.36", true},
		{"docker.io", "quay.io/x/y", false},
		{"quay.io", "quay.io/x/y:tag", true},
		{"quay.io/x", "quay.io/x/y", true},
		{"quay.io/x", "quay.io/xy/z", false},
		{"*.example.com", "reg.example.com/app", true},
		{"*.example.com", "example.com/app", false},
		{"localhost:5000", "localhost:5000/app@sha256:abc", true},
		{"localhost:5000", "localhost/app", false},
	}
	for _, tt := range tests {
		if got := registryMatches(tt.key, tt.image); got != tt.want {
			t.Errorf("registryMatches(%q, %q) = %v, want %v", tt.key, tt.image, got, tt.want)
		}
	}
}

// TestAuths: the matching secrets' credentials come most specific path
// first (an auth field decoded), a missing secret is a warning, and
// secrets for other registries give none.
func TestAuths(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "host", Namespace: "default"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"reg.example.com":{"auth":"aG9zdDpwdw=="}}}`)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "path", Namespace: "default"}, Type: corev1.SecretTypeDockercfg,
			Data: map[string][]byte{corev1.DockerConfigKey: []byte(`{"https://reg.example.com/team":{"username":"team","password":"pw2"}}`)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"quay.io":{"username":"q","password":"q"}}}`)}},
	)
	const image = "reg.example.com/team/app:1"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "private", Namespace: "default"}}
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "host"}, {Name: "missing"}, {Name: "path"}, {Name: "other"}}

	auths, warnings := Auths(ctx, client, pod, image)
	if len(auths) != 2 || auths[0].Username != "team" || auths[1].Username != "host" || auths[1].Password != "pw" {
		t.Fatalf("auths = %v, want the path-specific entry then the host's (decoded)", auths)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings = %v, want one for the missing secret", warnings)
	}

	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "other"}}
	if auths, _ := Auths(ctx, client, pod, image); len(auths) != 0 {
		t.Errorf("auths = %v, want none for another registry's secret", auths)
	}
}
