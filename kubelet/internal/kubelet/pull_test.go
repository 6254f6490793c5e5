package kubelet

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"

	"trireme.dev/kubelet/internal/pullsecrets"
)

// authRecorder records the credentials each pull is made with.
type authRecorder struct {
	*critesting.FakeImageService
	auths []*runtimeapi.AuthConfig
}

func (r *authRecorder) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sc *runtimeapi.PodSandboxConfig) (string, error) {
	r.auths = append(r.auths, auth)
	return r.FakeImageService.PullImage(ctx, image, auth, sc)
}

// TestImagePullSecretsPassedAsCRIAuth: a pull tries the pod's matching
// credentials in turn, and is anonymous without one.
func TestImagePullSecretsPassedAsCRIAuth(t *testing.T) {
	f := newFixture(t)
	rec := &authRecorder{FakeImageService: f.images}
	f.k.cfg.Images = rec
	ctx := context.Background()
	secrets := []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "host", Namespace: "default"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"reg.example.com":{"auth":"aG9zdDpwdw=="}}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "path", Namespace: "default"}, Type: corev1.SecretTypeDockercfg,
			Data: map[string][]byte{corev1.DockerConfigKey: []byte(`{"https://reg.example.com/team":{"username":"team","password":"pw2"}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"quay.io":{"username":"q","password":"q"}}}`)}},
	}
	for _, s := range secrets {
		if _, err := f.client.CoreV1().Secrets("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := testPod("private")
	pod.Spec.Containers[0].Image = "reg.example.com/team/app:1"
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "host"}, {Name: "missing"}, {Name: "path"}, {Name: "other"}}

	auths, warnings := pullsecrets.Auths(ctx, f.k.cfg.Client, pod, pod.Spec.Containers[0].Image)
	if len(auths) != 2 || auths[0].Username != "team" || auths[1].Username != "host" || auths[1].Password != "pw" {
		t.Fatalf("auths = %v, want the path-specific entry then the host's (decoded)", auths)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings = %v, want one for the missing secret", warnings)
	}

	// The first credential is refused; the pull succeeds with the second.
	f.images.InjectError("PullImage", errors.New("unauthorized"))
	ref, err := f.k.pullImage(ctx, &runtimeapi.ImageSpec{Image: pod.Spec.Containers[0].Image}, auths, nil)
	if err != nil || ref == "" {
		t.Fatalf("pullImage = %q, %v", ref, err)
	}
	if len(rec.auths) != 2 || rec.auths[0].Username != "team" || rec.auths[1].Username != "host" {
		t.Errorf("pulls made with %v", rec.auths)
	}

	// Without matching secrets the pull is anonymous.
	rec.auths = nil
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "other"}}
	auths, _ = pullsecrets.Auths(ctx, f.k.cfg.Client, pod, pod.Spec.Containers[0].Image)
	if _, err := f.k.pullImage(ctx, &runtimeapi.ImageSpec{Image: "reg.example.com/team/app:1"}, auths, nil); err != nil {
		t.Fatal(err)
	}
	if len(rec.auths) != 1 || rec.auths[0] != nil {
		t.Errorf("pulls made with %v, want one anonymous", rec.auths)
	}
}
