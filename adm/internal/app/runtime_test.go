package app_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"trireme.dev/adm/internal/containerd"
	"trireme.dev/adm/internal/supervisor"
	"trireme.dev/componentbase/testcluster"
)

// TestContainerRuntimePhase writes containerd's configuration into a temporary root,
// starts a private containerd with it (own root, state and socket) under
// triremeadm's supervisor, checks that the CRI plugin loaded, that a killed
// containerd is restarted, that images import into the k8s.io namespace, and that
// reset stops it by its recorded PID and removes what the phase wrote.
func TestContainerRuntimePhase(t *testing.T) {
	for _, b := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Fatalf("%s not found: apt-get install -y containerd runc (hack/install-deps.sh)", b)
		}
	}
	root := t.TempDir()
	pidFile := filepath.Join(root, "var/run/trireme/containerd.pid")
	socket := filepath.Join(root, "run/containerd/containerd.sock")
	t.Cleanup(func() {
		// Whatever happened, stop the supervisor this test started, by its PID.
		if _, err := supervisor.Stop(pidFile, 10*time.Second); err != nil {
			t.Errorf("stop containerd: %v", err)
		}
	})
	out := adm(t, "init", "phase", "container-runtime", "--root-dir", root, "--node-name", "adm-rt", "--apiserver-advertise-address", "127.0.0.1")
	if !strings.Contains(out, "[container-runtime]") || !strings.Contains(out, "started containerd under supervisor PID") {
		t.Errorf("phase output:\n%s", out)
	}
	conf, err := os.ReadFile(filepath.Join(root, "etc/trireme/containerd/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	denies, err := containerd.HostDeniesLoweringOOMScore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"restrict_oom_score_adj = " + map[bool]string{true: "true", false: "false"}[denies],
		`sandbox_image = "trireme.dev/pause:`,
		`bin_dir = "/usr/lib/cni"`,
		`address = "` + socket + `"`,
		`conf_template = "` + filepath.Join(root, "etc/trireme/cni/10-trireme.conflist.template") + `"`,
	} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config.toml lacks %q:\n%s", want, conf)
		}
	}
	pid, ok := supervisor.Running(pidFile)
	if !ok {
		t.Fatalf("no supervisor recorded in %s", pidFile)
	}
	plugins, err := exec.Command("ctr", "--address", socket, "plugins", "ls").CombinedOutput()
	if err != nil {
		t.Fatalf("ctr plugins ls: %v\n%s", err, plugins)
	}
	if !criOK(string(plugins)) {
		t.Errorf("CRI plugin not ok:\n%s\nlog:\n%s", plugins, readLog(root))
	}

	// The supervisor restarts containerd when it dies.
	child, err := supervisor.ReadPID(pidFile + ".child")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if again, err := supervisor.ReadPID(pidFile + ".child"); err == nil && again != child {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd not restarted after SIGKILL\n%s", readLog(root))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := containerd.WaitReady(context.Background(), socket, 20*time.Second); err != nil {
		t.Fatal(err)
	}

	// images import loads archives into the k8s.io namespace.
	dir := t.TempDir()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	// ctr imports only images for this platform.
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag("trireme.dev/adm-import-test:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(filepath.Join(dir, "adm-import-test.tar"), ref, img); err != nil {
		t.Fatal(err)
	}
	out = adm(t, "images", "import", "--dir", dir, "--root-dir", root)
	if !strings.Contains(out, "trireme.dev/adm-import-test:v1") {
		t.Errorf("images import printed %q", out)
	}
	ls, err := exec.Command("ctr", "--address", socket, "-n", "k8s.io", "images", "ls", "-q").CombinedOutput()
	if err != nil || !strings.Contains(string(ls), "trireme.dev/adm-import-test:v1") {
		t.Errorf("k8s.io images: %v\n%s", err, ls)
	}

	// The images phase refuses a node whose images are neither there nor
	// pullable (this machine reaches no registry), naming each, and passes
	// once they are imported.
	phase := []string{"init", "phase", "images", "--root-dir", root, "--node-name", "adm-rt",
		"--apiserver-advertise-address", "127.0.0.1", "--kubernetes-version", "v-images-test"}
	failed, err := exec.Command(triremeadm, phase...).CombinedOutput()
	if err == nil {
		t.Fatalf("images phase passed without the images:\n%s", failed)
	}
	t.Logf("images phase without the images:\n%s", failed)
	needed := []string{"pause", "trireme-apiserver", "trireme-controller-manager", "trireme-scheduler", "etcd"}
	for _, want := range append(needed, "lacks 5 image(s)", "triremeadm images import") {
		if !strings.Contains(string(failed), want) {
			t.Errorf("images phase output lacks %q:\n%s", want, failed)
		}
	}
	dir = t.TempDir()
	for _, n := range needed {
		ref, err := name.NewTag("trireme.dev/" + n + ":v-images-test")
		if err != nil {
			t.Fatal(err)
		}
		if err := tarball.WriteToFile(filepath.Join(dir, n+".tar"), ref, img); err != nil {
			t.Fatal(err)
		}
	}
	adm(t, "images", "import", "--dir", dir, "--root-dir", root)
	if out = adm(t, phase...); !strings.Contains(out, "containerd holds trireme.dev/pause:v-images-test") {
		t.Errorf("images phase output:\n%s", out)
	}

	// reset also clears this network namespace (the CNI bridge, the proxy's
	// and flannel's rules and devices): in a namespace of its own, it leaves
	// alone a cluster that runs on this machine meanwhile (the e2e suite's).
	resetOut, err := exec.Command("unshare", "--net", triremeadm, "reset", "--force", "--root-dir", root).CombinedOutput()
	if err != nil {
		t.Fatalf("triremeadm reset: %v\n%s", err, resetOut)
	}
	out = string(resetOut)
	if !strings.Contains(out, "stopped containerd") {
		t.Errorf("reset output:\n%s", out)
	}
	if !supervisor.Gone(pid) {
		t.Errorf("supervisor PID %d still running after reset", pid)
	}
	for _, gone := range []string{"etc/trireme/containerd", "etc/trireme/cni", "var/run/trireme/containerd.pid"} {
		if _, err := os.Stat(filepath.Join(root, gone)); err == nil {
			t.Errorf("%s left after reset", gone)
		}
	}
}

func criOK(plugins string) bool {
	for _, l := range strings.Split(plugins, "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] == "io.containerd.grpc.v1" && f[1] == "cri" {
			return f[len(f)-1] == "ok"
		}
	}
	return false
}

func readLog(root string) string {
	b, _ := os.ReadFile(filepath.Join(root, "var/log/trireme/containerd.log"))
	return testcluster.Tail(string(b), 40)
}
