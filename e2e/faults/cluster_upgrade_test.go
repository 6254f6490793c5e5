package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		holder, err := c.vipHolder(ctx)
		if err != nil {
			t.Fatal(err)
		}
		step := time.Now()
		if err := n.Import(testcluster.ImageArchives(testcluster.ImageDir(), controlPlaneImages...)); err != nil {
			t.Fatal(err)
		}
		imported := since(step)
		args := []string{c.adm, "upgrade", "node", to, "--root-dir", n.Root}
		if i == 0 {
			args[2] = "apply"
		}
		out, err := n.Command(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s on %s: %v\n%s", strings.Join(args[:4], " "), n.Name, err, out)
		}
		logf("upgrade: %s on %s (images imported in %s, then %s): %s", strings.Join(args[1:3], " "), n.Name, imported, from+" → "+to, since(step))
		// Where in the node's step the writes stopped longest, to hold
		// against the steps' times below.
		nw := l.ledger.Window(step, time.Now())
		logf("upgrade: %s (VIP holder before: %s): %d writes, %d failed, longest without an acknowledged write %s from %s into the node's step; %s",
			n.Name, holder, nw.Requests, nw.Failed, ms(nw.LongestGap), ms(nw.GapStart.Sub(step)), c.vipMove(ctx, holder, step))
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
	upgradeWorker(ctx, t, c, to)
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if v := n.Status.NodeInfo.KubeletVersion; v != to {
			t.Errorf("node %s's kubelet is %s after the upgrade to %s", n.Name, v, to)
		}
	}
}

// upgradeWorker upgrades the worker's kubelet as a user does: drained
// (honoring PDBs), `triremeadm upgrade node` there with this build's
// triremeadm, uncordoned; then a new pod runs on it.
func upgradeWorker(ctx context.Context, t *testing.T, c *haCluster, to string) {
	t.Helper()
	w := c.worker()
	step := time.Now()
	if out, err := c.kubectl(ctx, "drain", w.Name, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout", "2m"); err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s", w.Name, err, out)
	}
	w.Adm = c.adm
	out, err := w.adm("upgrade", "node").CombinedOutput()
	if err != nil {
		t.Fatalf("upgrade node on %s: %v\n%s", w.Name, err, out)
	}
	if out, err := c.kubectl(ctx, "uncordon", w.Name); err != nil {
		t.Fatalf("kubectl uncordon %s: %v\n%s", w.Name, err, out)
	}
	logf("upgrade: drain, upgrade node and uncordon on %s: %s", w.Name, since(step))
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "kubelet") {
			logf("upgrade: %s: %s", w.Name, l)
		}
	}
	startSteadyPod(t, c, "after-upgrade")
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
