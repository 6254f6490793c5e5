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

// TestCertsRenew renews what the certs and kubeconfig phases wrote, without a
// kubelet to restart pods, and refuses without the CA's key.
func TestCertsRenew(t *testing.T) {
	root := t.TempDir()
	for _, phase := range []string{"certs", "kubeconfig"} {
		if out, err := exec.Command(triremeadm, "init", "phase", phase, "--root-dir", root, "--node-name", "cp-1", "--apiserver-advertise-address", "127.0.0.1").CombinedOutput(); err != nil {
			t.Fatalf("init phase %s: %v\n%s", phase, err, out)
		}
	}
	kubelet := filepath.Join(root, "etc/trireme/kubelet.conf")
	kubeletBefore, _ := os.ReadFile(kubelet)
	out, err := exec.Command(triremeadm, "certs", "renew", "all", "--restart=false", "--root-dir", root).CombinedOutput()
	if err != nil {
		t.Fatalf("certs renew all: %v\n%s", err, out)
	}
	for _, want := range []string{"[certs] apiserver renewed, expires", "[certs] etcd/peer renewed", "[certs] admin.conf renewed", "[certs] scheduler.conf renewed", "Restart the static pods"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("renew output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"kubelet.conf", "vip-manager.conf", " ca renewed"} {
		if strings.Contains(string(out), not) {
			t.Errorf("renew output names %q:\n%s", not, out)
		}
	}
	if after, _ := os.ReadFile(kubelet); string(after) != string(kubeletBefore) {
		t.Error("kubelet.conf was renewed")
	}
	os.Remove(filepath.Join(root, "etc/trireme/pki/ca.key"))
	out, err = exec.Command(triremeadm, "certs", "renew", "apiserver", "--root-dir", root).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ca.key is not on this node") || !strings.Contains(string(out), "--certificate-key") {
		t.Errorf("renew without the CA key: %v\n%s", err, out)
	}
	out, err = exec.Command(triremeadm, "certs", "renew", "kubelet.conf", "--root-dir", root).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown certificate "kubelet.conf"`) {
		t.Errorf("renew kubelet.conf: %v\n%s", err, out)
	}
}

// TestEtcdSnapshotSchedule writes the etcd-snapshot static pod with the etcd
// phase, removes it when snapshots are turned off, and lists snapshots.
func TestEtcdSnapshotSchedule(t *testing.T) {
	root := t.TempDir()
	manifest := filepath.Join(root, "etc/trireme/manifests/etcd-snapshot.yaml")
	etcdPhase := func(args ...string) string {
		out, err := exec.Command(triremeadm, append([]string{"init", "phase", "etcd", "--root-dir", root, "--node-name", "cp-1", "--apiserver-advertise-address", "127.0.0.1"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("init phase etcd %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := etcdPhase("--etcd-snapshot-interval=6h", "--etcd-snapshot-retention=2")
	data, err := os.ReadFile(manifest)
	if err != nil || !strings.Contains(string(data), "--retention=2") || !strings.Contains(string(data), "--interval=6h0m0s") {
		t.Errorf("etcd-snapshot manifest: %v\n%s\n%s", err, data, out)
	}
	dir := filepath.Join(root, "var/lib/trireme/etcd-snapshots")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "etcd-snapshot-cp-1-20261202T120000Z.db"), make([]byte, 4128), 0o600)
	out2, err := exec.Command(triremeadm, "etcd", "snapshot", "list", "--root-dir", root).CombinedOutput()
	if err != nil || !strings.Contains(string(out2), "etcd-snapshot-cp-1-20261202T120000Z.db  cp-1  2026-12-02T12:00:00Z") {
		t.Errorf("snapshot list: %v\n%s", err, out2)
	}
	etcdPhase("--etcd-snapshot-interval=0")
	if _, err := os.Stat(manifest); !os.IsNotExist(err) {
		t.Errorf("etcd-snapshot manifest kept with snapshots off: %v", err)
	}
}

// TestInitRefusesABadSnapshot: a corrupt or truncated --etcd-restore
// snapshot stops init before its first phase, with nothing written.
func TestInitRefusesABadSnapshot(t *testing.T) {
	root := t.TempDir()
	snapshot := filepath.Join(t.TempDir(), "truncated.db")
	if err := os.WriteFile(snapshot, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, file, want string }{
		{name: "truncated", file: snapshot, want: "refusing --etcd-restore, nothing was changed"},
		{name: "missing", file: filepath.Join(root, "nope.db"), want: "nope.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(triremeadm, "init", "--root-dir", root, "--node-name", "cp-1", "--apiserver-advertise-address", "127.0.0.1",
				"--etcd-restore", tc.file).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "[preflight]") {
				t.Errorf("init --etcd-restore %s: %v\n%s", tc.name, err, out)
			}
			if _, err := os.Stat(filepath.Join(root, "etc/trireme")); !os.IsNotExist(err) {
				t.Errorf("init wrote below %s before refusing: %v", root, err)
			}
		})
	}
}
