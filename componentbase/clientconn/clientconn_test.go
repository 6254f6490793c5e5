package clientconn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: secret}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

func TestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		master     string
		kubeconfig string
		cc         componentbaseconfig.ClientConnectionConfiguration
		wantHost   string
		wantAccept string
		wantErr    string
	}{
		{name: "kubeconfig", kubeconfig: path, cc: componentbaseconfig.ClientConnectionConfiguration{QPS: 50, Burst: 100},
			wantHost: "https://10.0.0.1:6443"},
		{name: "master overrides the server", master: "https://10.0.0.2:6443", kubeconfig: path,
			wantHost: "https://10.0.0.2:6443"},
		{name: "protobuf accepts JSON too", kubeconfig: path,
			cc:       componentbaseconfig.ClientConnectionConfiguration{ContentType: "application/vnd.kubernetes.protobuf"},
			wantHost: "https://10.0.0.1:6443", wantAccept: "application/vnd.kubernetes.protobuf,application/json"},
		{name: "acceptContentTypes wins", kubeconfig: path,
			cc:       componentbaseconfig.ClientConnectionConfiguration{ContentType: "application/vnd.kubernetes.protobuf", AcceptContentTypes: "application/vnd.kubernetes.protobuf"},
			wantHost: "https://10.0.0.1:6443", wantAccept: "application/vnd.kubernetes.protobuf"},
		{name: "missing file", kubeconfig: filepath.Join(t.TempDir(), "none"), wantErr: "client configuration"},
		{name: "neither outside a cluster", wantErr: "client configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			cfg, err := Config(tt.master, tt.kubeconfig, tt.cc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost || cfg.AcceptContentTypes != tt.wantAccept || cfg.QPS != tt.cc.QPS || cfg.Burst != int(tt.cc.Burst) {
				t.Errorf("host %q accept %q qps %v burst %d; want %q %q %v %d", cfg.Host, cfg.AcceptContentTypes, cfg.QPS, cfg.Burst,
					tt.wantHost, tt.wantAccept, tt.cc.QPS, tt.cc.Burst)
			}
		})
	}
}
