package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitStopsAtMissingComponents runs the whole init into a temporary root: the
// phases that can run do, and it stops with a clear error at the kubelet rather than
// pretending to succeed.
func TestInitStopsAtMissingComponents(t *testing.T) {
	root := t.TempDir()
	out, err := exec.Command(triremeadm, "init", "--root-dir", root, "--node-name", "adm-full", "--apiserver-advertise-address", "127.0.0.1",
		"--skip-phases", "preflight,container-runtime,images").CombinedOutput()
	if err == nil {
		t.Fatalf("init succeeded without a kubelet:\n%s", out)
	}
	for _, want := range []string{"[preflight] skipped", "[certs] Write the cluster's certificates and keys ... ok", "[control-plane]",
		"[kubelet-start] Write the kubelet's configuration and start it ... failed", "phase kubelet-start: trireme-kubelet is neither beside triremeadm nor in PATH", "triremeadm init phase kubelet-start", "triremeadm reset"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/trireme/kubelet/config.yaml")); err != nil {
		t.Errorf("kubelet-start did not write the KubeletConfiguration: %v", err)
	}
	if strings.Contains(string(out), "initialized successfully") {
		t.Errorf("init claimed success:\n%s", out)
	}
}

func TestCommandErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"init", "--skip-phases", "nope", "--apiserver-advertise-address", "127.0.0.1"}, `unknown phase "nope"`},
		{[]string{"join", "10.0.0.1:6443"}, "--token is required"},
		{[]string{"init", "phase", "certs", "--service-cidr", "bad", "--apiserver-advertise-address", "127.0.0.1"}, "networking.serviceSubnet"},
		{[]string{"token", "delete", "x!", "--kubeconfig", "/nonexistent"}, "kubeconfig"},
	}
	for _, tt := range tests {
		out, err := exec.Command(triremeadm, append(tt.args, "--root-dir", t.TempDir())...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("triremeadm %v: err %v, output %q, want %q", tt.args, err, out, tt.want)
		}
	}
	out, err := exec.Command(triremeadm, "images", "list", "--kubernetes-version", "v1.37.0-x").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "trireme.dev/etcd:v1.37.0-x\n") || !strings.Contains(string(out), "trireme.dev/pause:v1.37.0-x") {
		t.Errorf("images list: %v\n%s", err, out)
	}
	out, _ = exec.Command(triremeadm, "init", "--help").CombinedOutput()
	for _, p := range []string{"preflight", "certs", "kubeconfig", "container-runtime", "images", "etcd", "control-plane", "kubelet-start", "wait-control-plane", "upload-config", "upload-certs", "mark-control-plane", "bootstrap-token", "addon"} {
		if !strings.Contains(string(out), "  "+p+" ") {
			t.Errorf("init --help does not list phase %s", p)
		}
	}
}
