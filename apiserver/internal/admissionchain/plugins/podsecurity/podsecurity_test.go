package podsecurity

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/pod-security-admission/admission/api/load"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

// exemptConfig is a PodSecurity admission configuration as it appears in
// the PodSecurity entry of --admission-control-config-file.
const exemptConfig = `
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
exemptions:
  usernames: ["trusted"]
`

func TestPodSecurity(t *testing.T) {
	restricted := map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
	privileged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: new(true)},
	}}}}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	tests := []struct {
		name     string
		config   string
		nsLabels map[string]string
		pod      *corev1.Pod
		user     string
		wantErr  string
	}{
		{name: "privileged pod refused under restricted", nsLabels: restricted, pod: privileged, user: "alice",
			wantErr: `pods "p" is forbidden: violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true)`},
		{name: "unlabelled namespace is privileged by default", pod: privileged, user: "alice"},
		{name: "config default baseline refuses privileged", config: exemptConfig, pod: privileged, user: "alice",
			wantErr: `violates PodSecurity "baseline:latest": privileged`},
		{name: "exempt user admitted", config: exemptConfig, pod: privileged, user: "trusted"},
		{name: "baseline pod admitted under baseline", config: exemptConfig, pod: plain, user: "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load.LoadFromData([]byte(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPlugin(cfg)
			if err != nil {
				t.Fatal(err)
			}
			admissiontest.Init(t, p, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: tt.nsLabels}})
			a := admission.NewAttributesRecord(tt.pod.DeepCopy(), nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: tt.user})
			err = p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
