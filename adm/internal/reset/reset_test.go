package reset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trireme.dev/adm/internal/paths"
)

func TestRun(t *testing.T) {
	root := t.TempDir()
	p := paths.Paths{Root: root}
	in := Inputs{Paths: p, PKIDir: p.In("/etc/trireme/pki"), EtcdDataDir: p.In("/var/lib/trireme/etcd")}
	keep := []string{p.LogFile("containerd"), p.In("/etc/cni/net.d/99-other.conflist"), p.In("/etc/trireme/unrelated")}
	for _, f := range append(keep, p.Kubeconfig("admin.conf"), filepath.Join(in.PKIDir, "ca.crt"), filepath.Join(in.EtcdDataDir, "member/x"),
		filepath.Join(p.ManifestsDir(), "etcd.yaml"), p.ContainerdConfig(), p.CNITemplate(), p.In("/etc/cni/net.d/10-containerd-net.conflist"),
		filepath.Join(p.LocalPathDir(), "pvc-1_default_data-web-0/file")) {
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte("x"), 0o600)
	}
	// A stale PID file naming a process that is not a supervisor is removed, and that
	// process is left alone.
	os.MkdirAll(p.RunDir(), 0o755)
	os.WriteFile(p.PIDFile("containerd"), []byte("1\n"), 0o644)
	var report []string
	if err := Run(in, func(f string, a ...any) { report = append(report, f) }); err != nil {
		t.Fatal(err)
	}
	for _, tgt := range Targets(in) {
		if _, err := os.Stat(tgt); err == nil {
			t.Errorf("%s left behind", tgt)
		}
	}
	for _, k := range keep {
		if _, err := os.Stat(k); err != nil {
			t.Errorf("%s removed: %v", k, err)
		}
	}
	if _, err := os.Stat(p.PIDFile("containerd")); err == nil {
		t.Error("stale PID file left")
	}
	if strings.Contains(strings.Join(report, "\n"), "stopped") {
		t.Errorf("reported stopping a process it did not start: %v", report)
	}
}
