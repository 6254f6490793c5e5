package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPIConfig: a kubeconfig's server and CA are kept and its credentials
// dropped; in a pod without the cluster's environment or CA the error says
// what is missing.
func TestAPIConfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := apiConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "https://10.0.0.1:6443" || c.BearerToken != "" {
		t.Errorf("host %q, token %q: want the server and no token", c.Host, c.BearerToken)
	}

	for _, tc := range []struct {
		name, host, port, want string
	}{
		{"not in a pod", "", "", "KUBERNETES_SERVICE_HOST"},
		{"no CA", "10.96.0.1", "443", "the cluster's CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", tc.host)
			t.Setenv("KUBERNETES_SERVICE_PORT", tc.port)
			if _, err := os.Stat(inClusterCA); err == nil {
				t.Fatalf("%s exists on this machine", inClusterCA)
			}
			_, err := apiConfig("")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("apiConfig = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
