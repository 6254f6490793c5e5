package token

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"trireme.dev/api/config/v1alpha1"
)

func TestSecret(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		tok     v1alpha1.BootstrapToken
		want    map[string]string
		wantErr string
	}{
		{"full", v1alpha1.BootstrapToken{Token: "abcdef.0123456789abcdef", Description: "d", TTL: &metav1.Duration{Duration: time.Hour},
			Usages: []string{"signing", "authentication"}, Groups: []string{"system:bootstrappers:x"}},
			map[string]string{"token-id": "abcdef", "token-secret": "0123456789abcdef", "description": "d", "expiration": "2026-01-02T04:04:05Z",
				"usage-bootstrap-signing": "true", "usage-bootstrap-authentication": "true", "auth-extra-groups": "system:bootstrappers:x"}, ""},
		{"forever", v1alpha1.BootstrapToken{Token: "abcdef.0123456789abcdef", TTL: &metav1.Duration{}, Usages: []string{"signing"}},
			map[string]string{"token-id": "abcdef", "usage-bootstrap-signing": "true"}, ""},
		{"bad token", v1alpha1.BootstrapToken{Token: "nope"}, nil, "does not match"},
		{"bad usage", v1alpha1.BootstrapToken{Token: "abcdef.0123456789abcdef", Usages: []string{"x"}}, nil, "usage"},
		{"bad group", v1alpha1.BootstrapToken{Token: "abcdef.0123456789abcdef", Groups: []string{"system:masters"}}, nil, "system:masters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Secret(&tt.tok, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != "bootstrap-token-abcdef" || s.Namespace != "kube-system" || s.Type != "bootstrap.kubernetes.io/token" {
				t.Errorf("secret meta %s/%s %s", s.Namespace, s.Name, s.Type)
			}
			for k, v := range tt.want {
				if string(s.Data[k]) != v {
					t.Errorf("data[%s] = %q, want %q", k, s.Data[k], v)
				}
			}
			if _, ok := s.Data["expiration"]; ok != (tt.want["expiration"] != "") {
				t.Errorf("expiration present = %v", ok)
			}
		})
	}
	generated := v1alpha1.BootstrapToken{Usages: []string{"signing"}}
	if _, err := Secret(&generated, now); err != nil || len(generated.Token) != 23 {
		t.Errorf("generated token %q, %v", generated.Token, err)
	}
}

func TestCreateListDelete(t *testing.T) {
	ctx := context.Background()
	c := fake.NewSimpleClientset()
	for _, tok := range []string{"bbbbbb.0123456789abcdef", "aaaaaa.0123456789abcdef"} {
		tk := &v1alpha1.BootstrapToken{Token: tok}
		v1alpha1.SetDefaultsBootstrapToken(tk)
		if err := Create(ctx, c, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// Creating again updates.
	tk := &v1alpha1.BootstrapToken{Token: "aaaaaa.0123456789abcdef", Description: "again", Usages: []string{"signing"}}
	if err := Create(ctx, c, tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	infos, err := List(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].ID != "aaaaaa" || infos[0].Description != "again" || infos[1].Token != "bbbbbb.0123456789abcdef" ||
		strings.Join(infos[1].Usages, ",") != "authentication,signing" || infos[1].Expires == nil {
		t.Errorf("List = %+v", infos)
	}
	if err := Delete(ctx, c, "bbbbbb.0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, c, "aaaaaa"); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, c, "BAD!"); err == nil {
		t.Error("bad id accepted")
	}
	if infos, _ := List(ctx, c); len(infos) != 0 {
		t.Errorf("after delete: %+v", infos)
	}
}
