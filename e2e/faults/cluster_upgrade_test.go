package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
)

// upgradeFromEnv names the bin directory of an earlier build (its images
// beside it, in ../images): the cluster is installed with it, and
// TestUpgrade upgrades it to this build. `make bench` sets it
// (hack/build-earlier.sh builds the earlier commit).
const upgradeFromEnv = "TRIREME_E2E_UPGRADE_FROM"

// controlPlaneImages are the images of a control-plane node's static pods.
var controlPlaneImages = []string{"pause", "etcd", "trireme-apiserver", "trireme-controller-manager", "trireme-scheduler", "trireme-vip"}

// TestUpgrade (it runs before TestFaults, which then faults this build)
// upgrades the control plane, installed by an earlier build, to this build
// under the write load, as a user does: this build's images
// imported on each control-plane node, `triremeadm upgrade apply VERSION`
// on the first, `upgrade node` on the others, one at a time. Every static
// pod then runs this build's image, no acknowledged write is lost, the etcd
// members agree, and the worker's pod was not restarted. It prints the
// requests that failed and the longest time without an acknowledged write.
func TestUpgrade(t *testing.T) {
	if cluster == nil || os.Getenv(upgradeFromEnv) == "" {
		t.Skip("needs TRIREME_E2E_FAULTS=1 and " + upgradeFromEnv + " (make bench sets both)")
	}
	c, ctx := cluster, context.Background()
	from, to := admVersion(t, c.installedWith), admVersion(t, c.adm)
	if from == to {
		t.Fatalf("the earlier build is this build's version, %s", to)
	}
	pod := startSteadyPod(t, c, "steady-upgrade")
	l, err := startLoad(ctx, c.config, "upgrade")
	if err != nil {
		t.Fatal(err)
	}
	defer l.stop()
	l.waitStarted(t)
	// As a user starts: every control-plane pod ready (apply checks it).
	if err := c.waitHealthy(ctx, time.Now(), 2*time.Minute); err != nil {
		t.Fatalf("before the upgrade: %v", err)
	}

	start := time.Now()
	for i, n := range c.controlPlane() {
		// As a user: this build's triremeadm and images on the node, and
		// the cluster healthy before each node, which apply and node check.
		n.Adm = c.adm
		if i > 0 {
			if err := c.waitHealthy(ctx, time.Now(), 2*time.Minute); err != nil {
				t.Fatalf("before the upgrade of %s: %v", n.Name, err)
			}
		}
		step := time.Now()
		if err := n.Import(testcluster.ImageArchives(testcluster.ImageDir(), controlPlaneImages...)); err != nil {
			t.Fatal(err)
		}
		args := []string{c.adm, "upgrade", "node", to, "--root-dir", n.Root}
		if i == 0 {
			args[2] = "apply"
		}
		out, err := n.Command(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s on %s: %v\n%s", strings.Join(args[:4], " "), n.Name, err, out)
		}
		logf("upgrade: %s on %s (images imported, then %s): %s", strings.Join(args[1:3], " "), n.Name, from+" → "+to, since(step))
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); strings.Contains(l, " ... ") || strings.Contains(l, " healthy at ") {
				logf("upgrade: %s: %s", n.Name, l)
			}
		}
	}
	end := time.Now()
	if err := c.waitHealthy(ctx, end, 2*time.Minute); err != nil {
		t.Fatalf("after the upgrade: %v", err)
	}
	w := l.ledger.Window(start, end)
	logf("upgrade of the 3 control-plane nodes %s → %s in %s: %d writes, %d failed (%.2f %%), longest without an acknowledged write %s",
		from, to, end.Sub(start).Round(100*time.Millisecond), w.Requests, w.Failed, 100*float64(w.Failed)/float64(max(w.Requests, 1)), w.LongestGap.Round(10*time.Millisecond))
	if w.Failed > 0 {
		logf("upgrade: failures: %s", w)
	}
	l.check(ctx, t, c.client)
	c.checkEtcdHashes(ctx, t)
	pod.checkUnchanged(t, c)

	out, err := c.kubectl(ctx, "get", "pods", "-n", "kube-system", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.containers[*].image}{"\n"}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, image, _ := strings.Cut(line, "=")
		for _, n := range c.controlPlane() {
			if strings.HasSuffix(name, "-"+n.Name) && !strings.HasSuffix(image, ":"+to) {
				t.Errorf("static pod %s runs %s after the upgrade to %s", name, image, to)
			}
		}
	}
}

// admVersion is the version a triremeadm binary reports, its images' tag.
func admVersion(t *testing.T, adm string) string {
	t.Helper()
	out, err := exec.Command(adm, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", adm, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" {
		t.Fatal(fmt.Errorf("%s version printed nothing", adm))
	}
	return v
}
