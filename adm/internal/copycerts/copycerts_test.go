package copycerts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestEncryptDecrypt(t *testing.T) {
	key, err := CreateKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := CreateKey()
	sealed, err := Encrypt([]byte("secret"), key)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, key string
		data      []byte
		want      string
		wantErr   bool
	}{
		{name: "same key", key: key, data: sealed, want: "secret"},
		{name: "other key", key: other, data: sealed, wantErr: true},
		{name: "altered", key: key, data: append(append([]byte{}, sealed[:len(sealed)-1]...), sealed[len(sealed)-1]^1), wantErr: true},
		{name: "short", key: key, data: []byte{1}, wantErr: true},
		{name: "bad key", key: "abcd", data: sealed, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decrypt(tt.data, tt.key)
			if (err != nil) != tt.wantErr || string(got) != tt.want {
				t.Errorf("Decrypt = %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestUploadDownload(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for _, f := range Files(false) {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key, _ := CreateKey()
	c := fake.NewClientset()
	ctx := context.Background()
	if err := Upload(ctx, c, src, key, false, []string{"system:bootstrappers:kubeadm:default-node-token"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	s, err := c.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.OwnerReferences) != 1 || !strings.HasPrefix(s.OwnerReferences[0].Name, "bootstrap-token-") {
		t.Errorf("owner references %+v, want one bootstrap token", s.OwnerReferences)
	}
	if strings.Contains(string(s.Data["ca.key"]), "content") {
		t.Error("ca.key is stored in clear")
	}
	if _, err := c.RbacV1().RoleBindings(metav1.NamespaceSystem).Get(ctx, roleName, metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	// Uploading again (a new key) replaces the Secret.
	key2, _ := CreateKey()
	if err := Upload(ctx, c, src, key2, false, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := Download(ctx, c, dst, key, false); err == nil {
		t.Error("Download with the replaced key succeeded")
	}
	written, err := Download(ctx, c, dst, key2, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(Files(false)) {
		t.Errorf("wrote %d files, want %d", len(written), len(Files(false)))
	}
	for _, f := range Files(false) {
		got, err := os.ReadFile(filepath.Join(dst, f))
		if err != nil || string(got) != "content of "+f {
			t.Errorf("%s = %q, %v", f, got, err)
		}
	}
	if st, _ := os.Stat(filepath.Join(dst, "ca.key")); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("ca.key mode %v, want 0600", st)
	}
}
