package load

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRestConfigContentTypes checks that the driver states the encoding it
// reports: left unset, client-go's typed clients speak protobuf to built-in
// kinds, which made "configmaps" a protobuf figure beside JSON custom
// resources.
func TestRestConfigContentTypes(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	const doc = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(kubeconfig, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                    string
		protobuf                bool
		wantContent, wantAccept string
	}{
		{"json", false, "application/json", "application/json"},
		{"protobuf", true, "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf,application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := restConfig(Config{Kubeconfig: kubeconfig, Protobuf: tc.protobuf})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ContentType != tc.wantContent || cfg.AcceptContentTypes != tc.wantAccept {
				t.Errorf("content %q accept %q, want %q and %q", cfg.ContentType, cfg.AcceptContentTypes, tc.wantContent, tc.wantAccept)
			}
		})
	}
}
