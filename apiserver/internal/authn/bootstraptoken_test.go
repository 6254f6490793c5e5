package authn

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func bootstrapSecret(mutate func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "bootstrap-token-abcdef"},
		Type:       "bootstrap.kubernetes.io/token",
		Data: map[string][]byte{
			"token-id":                       []byte("abcdef"),
			"token-secret":                   []byte("0123456789abcdef"),
			"usage-bootstrap-authentication": []byte("true"),
			"expiration":                     []byte(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)),
			"auth-extra-groups":              []byte("system:bootstrappers:kubeadm:default-node-token"),
		},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func TestBootstrapTokens(t *testing.T) {
	tests := []struct {
		name       string
		secret     *corev1.Secret
		token      string
		wantOK     bool
		wantErr    bool
		wantGroups []string
	}{
		{name: "valid token", secret: bootstrapSecret(nil), token: "abcdef.0123456789abcdef", wantOK: true,
			wantGroups: []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token"}},
		{name: "no extra groups", secret: bootstrapSecret(func(s *corev1.Secret) { delete(s.Data, "auth-extra-groups") }), token: "abcdef.0123456789abcdef", wantOK: true,
			wantGroups: []string{"system:bootstrappers"}},
		{name: "wrong secret", secret: bootstrapSecret(nil), token: "abcdef.0123456789abcdex", wantErr: true},
		{name: "unknown id", secret: bootstrapSecret(nil), token: "zzzzzz.0123456789abcdef", wantErr: true},
		{name: "expired", secret: bootstrapSecret(func(s *corev1.Secret) {
			s.Data["expiration"] = []byte(time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
		}), token: "abcdef.0123456789abcdef", wantErr: true},
		{name: "unparseable expiry counts as expired", secret: bootstrapSecret(func(s *corev1.Secret) { s.Data["expiration"] = []byte("soon") }), token: "abcdef.0123456789abcdef", wantErr: true},
		{name: "not for authentication", secret: bootstrapSecret(func(s *corev1.Secret) { delete(s.Data, "usage-bootstrap-authentication") }), token: "abcdef.0123456789abcdef", wantErr: true},
		{name: "wrong secret type", secret: bootstrapSecret(func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }), token: "abcdef.0123456789abcdef", wantErr: true},
		{name: "token-id mismatch", secret: bootstrapSecret(func(s *corev1.Secret) { s.Data["token-id"] = []byte("ghijkl") }), token: "abcdef.0123456789abcdef", wantErr: true},
		{name: "being deleted", secret: bootstrapSecret(func(s *corev1.Secret) { ts := metav1.Now(); s.DeletionTimestamp = &ts }), token: "abcdef.0123456789abcdef", wantErr: true},
		{name: "bad extra group", secret: bootstrapSecret(func(s *corev1.Secret) { s.Data["auth-extra-groups"] = []byte("system:masters") }), token: "abcdef.0123456789abcdef", wantErr: true},
		{name: "other token shape is left to others", secret: bootstrapSecret(nil), token: "not-a-bootstrap-token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			if err := idx.Add(tc.secret); err != nil {
				t.Fatal(err)
			}
			b := &BootstrapTokens{Secrets: corev1listers.NewSecretLister(idx).Secrets("kube-system")}
			resp, ok, err := b.AuthenticateToken(context.Background(), tc.token)
			if (err != nil) != tc.wantErr || ok != tc.wantOK {
				t.Fatalf("ok=%v err=%v, want ok=%v wantErr=%v", ok, err, tc.wantOK, tc.wantErr)
			}
			if !ok {
				return
			}
			if got := resp.User.GetName(); got != "system:bootstrap:abcdef" {
				t.Errorf("user = %q", got)
			}
			if got := resp.User.GetGroups(); len(got) != len(tc.wantGroups) || got[0] != tc.wantGroups[0] || got[len(got)-1] != tc.wantGroups[len(got)-1] {
				t.Errorf("groups = %v, want %v", got, tc.wantGroups)
			}
		})
	}
}
