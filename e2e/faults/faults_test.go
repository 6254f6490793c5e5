package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testwait"
)

// fault is one thing that goes wrong with the cluster.
type fault struct {
	name string
	// inject breaks the cluster, holder being the VIP's holder then. It
	// returns the node it hit and what heals the fault after lasts (nil:
	// the cluster heals itself, as a restarted process).
	inject func(ctx context.Context, c *haCluster, holder string) (target *node, heal func() error, err error)
	lasts  time.Duration
}

// faults are the suite's faults, in the order they come.
var faults = []fault{
	{name: "apiserver SIGKILL", inject: func(_ context.Context, c *haCluster, holder string) (*node, func() error, error) {
		n := c.otherControlPlane(holder)
		return n, nil, n.kill("trireme-apiserver")
	}},
	{name: "apiserver SIGKILL", inject: func(_ context.Context, c *haCluster, holder string) (*node, func() error, error) {
		n := c.node(holder)
		return n, nil, n.kill("trireme-apiserver")
	}},
	{name: "etcd leader SIGKILL", inject: func(ctx context.Context, c *haCluster, _ string) (*node, func() error, error) {
		n, err := c.etcdStatus(ctx)
		if err != nil {
			return nil, nil, err
		}
		return n, nil, n.kill("etcd")
	}},
	{name: "node cut off from the others", lasts: 30 * time.Second, inject: func(_ context.Context, c *haCluster, holder string) (*node, func() error, error) {
		n := c.otherControlPlane(holder)
		return n, n.plugIn, n.unplug()
	}},
	{name: "etcd leader's node cut off from the others", lasts: 30 * time.Second, inject: func(ctx context.Context, c *haCluster, _ string) (*node, func() error, error) {
		n, err := c.etcdStatus(ctx)
		if err != nil {
			return nil, nil, err
		}
		return n, n.plugIn, n.unplug()
	}},
	{name: "whole node stopped", lasts: 20 * time.Second, inject: func(_ context.Context, c *haCluster, holder string) (*node, func() error, error) {
		n := c.node(holder)
		heal, err := n.stop()
		return n, heal, err
	}},
	// One node in three holds both: the worst node to lose.
	{name: "whole node stopped, leading etcd too", lasts: 20 * time.Second, inject: func(ctx context.Context, c *haCluster, holder string) (*node, func() error, error) {
		n := c.node(holder)
		if err := c.moveEtcdLeader(ctx, n); err != nil {
			return nil, nil, err
		}
		heal, err := n.stop()
		return n, heal, err
	}},
	{name: "etcd member's disk full", lasts: 20 * time.Second, inject: func(_ context.Context, c *haCluster, _ string) (*node, func() error, error) {
		n := c.nodes[2]
		etcd, err := n.process("etcd")
		if err != nil {
			return nil, nil, err
		}
		filler, err := fillDisk(n.etcdDataDir())
		if err != nil {
			return nil, nil, err
		}
		heal := func() error { return os.Remove(filler) }
		// A member fails once it must allocate (a new WAL segment, a
		// snapshot), which it may have done already; restarted now it
		// must, and cannot.
		if err := syscall.Kill(etcd.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return nil, nil, errors.Join(err, heal())
		}
		return n, heal, nil
	}},
	{name: "containerd SIGKILL", inject: func(_ context.Context, c *haCluster, _ string) (*node, func() error, error) {
		n := c.worker()
		return n, nil, n.kill("containerd")
	}},
	{name: "controller-manager and scheduler leaders SIGKILL", inject: func(_ context.Context, c *haCluster, _ string) (*node, func() error, error) {
		var hit *node
		for _, component := range []struct{ lease, binary string }{
			{"kube-controller-manager", "trireme-controller-manager"}, {"kube-scheduler", "trireme-scheduler"},
		} {
			var leader *node
			for _, n := range c.controlPlane() {
				if n.leads(component.lease) {
					leader = n
				}
			}
			if leader == nil {
				return nil, nil, fmt.Errorf("no node's %s leads", component.binary)
			}
			if err := leader.kill(component.binary); err != nil {
				return nil, nil, err
			}
			hit = leader
		}
		return hit, nil, nil
	}},
}

// TestFaults runs the faults, one at a time, under the write load; after
// each it waits until the cluster is whole again and prints what the load
// saw. Then it checks that nothing acknowledged was lost.
func TestFaults(t *testing.T) {
	if cluster == nil {
		t.Skip("opt-in (it installs a cluster of network namespaces on this host): set TRIREME_E2E_FAULTS=1")
	}
	ctx := context.Background()
	c := cluster
	pod := startSteadyPod(t, c, "steady")
	l, err := startLoad(ctx, c.config, "faults")
	if err != nil {
		t.Fatal(err)
	}
	defer l.stop()
	l.waitStarted(t)
	rounds := 1
	if r, err := strconv.Atoi(os.Getenv("FAULTS_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	// FAULTS_ONLY names the one fault to run, when chasing it.
	only := os.Getenv("FAULTS_ONLY")
	for round := 1; round <= rounds; round++ {
		for _, f := range faults {
			if only != "" && f.name != only {
				continue
			}
			if !runFault(ctx, t, c, l, f, round) {
				return
			}
		}
	}
	if err := c.waitHealthy(ctx, time.Now(), time.Minute); err != nil {
		t.Fatalf("after the faults: %v", err)
	}
	l.check(ctx, t, c.client)
	c.checkEtcdHashes(ctx, t)
	pod.checkUnchanged(t, c)
}

// checkEtcdHashes fails the test unless the three etcd members hold the
// same key space at one revision.
func (c *haCluster) checkEtcdHashes(ctx context.Context, t *testing.T) {
	t.Helper()
	hashes, rev, err := c.etcdHashes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := hashes[c.nodes[0].Name]
	for _, hash := range hashes {
		if hash != first {
			t.Errorf("etcd members' hashes at revision %d differ: %v", rev, hashes)
			break
		}
	}
	logf("etcd members' hashes at revision %d: %v", rev, hashes)
}

// runFault injects f, heals it when it has lasted, waits until the cluster
// is whole, and prints what the load saw from the injection until then. It
// reports false when the cluster did not heal (the test has failed).
func runFault(ctx context.Context, t *testing.T, c *haCluster, l *load, f fault, round int) bool {
	holder, err := c.vipHolder(ctx)
	if err != nil || c.node(holder) == nil {
		t.Errorf("before %q: VIP holder %q: %v", f.name, holder, err)
		return false
	}
	progress := c.etcdProgress(ctx)
	start := time.Now()
	target, heal, err := f.inject(ctx, c, holder)
	if err != nil {
		t.Errorf("inject %q: %v", f.name, err)
		return false
	}
	if f.lasts > 0 {
		time.Sleep(f.lasts)
	}
	if heal != nil {
		if err := heal(); err != nil {
			t.Errorf("heal %q: %v", f.name, err)
			return false
		}
	}
	healed := time.Now()
	if err := c.waitHealthy(ctx, healed, 3*time.Minute); err != nil {
		t.Errorf("after %q on %s: %v\n%s", f.name, target.Name, err, target.logTail("kubelet", 20))
		return false
	}
	whole := time.Now()
	// Writes that end after the cluster is whole again belong to no fault.
	w := l.ledger.Window(start, whole)
	where := "off the VIP holder"
	if target.Name == holder {
		where = "on the VIP holder"
	}
	logf("round %d: %s (%s, %s): %d writes, %d failed, longest without an acknowledged write %s; whole again %s after the fault ended",
		round, f.name, target.Name, where, w.Requests, w.Failed, w.LongestGap.Round(10*time.Millisecond), whole.Sub(healed).Round(100*time.Millisecond))
	if w.Failed > 0 {
		logf("round %d: %s: failures: %s", round, f.name, w)
	}
	if target.Name == holder {
		logf("round %d: %s: %s; etcd members' applied log before it: %s", round, f.name, c.vipMove(ctx, holder, start), progress)
	}
	if w.LongestGap > slowRecovery {
		c.dumpVIP(ctx, w.GapStart, w.GapStart.Add(w.LongestGap))
	}
	return true
}

// waitHealthy waits until the cluster is healthy (Leases renewed after
// since), and says what was still wrong if it is not by timeout.
func (c *haCluster) waitHealthy(ctx context.Context, since time.Time, timeout time.Duration) error {
	err := testwait.Poll{Interval: time.Second}.Until(ctx, timeout, func(ctx context.Context) (bool, error) {
		problems := c.healthy(ctx, since)
		return problems == nil, problems
	})
	if err != nil {
		return fmt.Errorf("the cluster is not whole: %w", err)
	}
	return nil
}

// slowRecovery is a gap in the writes past which the suite prints how the
// VIP moved: the lease, each VIP manager's log and etcd's raft lines. It is
// issue 28's bound on the VIP holder, so every miss explains itself.
const slowRecovery = 6 * time.Second

// dumpVIP prints the VIP's Lease, the end of each VIP manager's log, and
// what etcd's members said about raft, or warned of, during the gap from
// `from` to `to`.
func (c *haCluster) dumpVIP(ctx context.Context, from, to time.Time) {
	out, err := c.kubectl(ctx, "get", "lease", "-n", "kube-system", "trireme-vip", "-o", "yaml")
	logf("writes stopped for longer than %s; the VIP's Lease (%v):\n%s", slowRecovery, err, out)
	c.dumpPodLogs("trireme-vip", 15)
	// The long gaps seen so far were etcd's: the surviving apiservers
	// could not read the Lease.
	for _, n := range c.controlPlane() {
		logs, _ := filepath.Glob(filepath.Join(n.Root, "var/log/pods", "kube-system_etcd-"+n.Name+"_*", "*", "*.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			logf("%s, %s to %s:\n%s", l, from.Format(time.StampMilli), to.Format(time.StampMilli), etcdLinesBetween(string(data), from, to, 60))
		}
	}
}

// etcdNoise are etcd's warnings that come by the hundred in a gap and say
// only that requests were slow or a peer unreachable.
var etcdNoise = []string{"dropped internal Raft message", `"msg":"request stats"`, "apply request took too long", "prober detected unhealthy status"}

// etcdLinesBetween picks, from a container log of etcd, at most max lines
// written between from and to that are raft's or warnings and errors.
func etcdLinesBetween(log string, from, to time.Time, max int) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		at, rest, _ := strings.Cut(l, " ")
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || t.Before(from) || t.After(to) {
			continue
		}
		if slices.ContainsFunc(etcdNoise, func(n string) bool { return strings.Contains(rest, n) }) {
			continue
		}
		if strings.Contains(rest, `"logger":"raft"`) || strings.Contains(rest, `"level":"warn"`) || strings.Contains(rest, `"level":"error"`) {
			out = append(out, l)
		}
	}
	if len(out) > max {
		out = append(out[:max], fmt.Sprintf("... %d more", len(out)-max))
	}
	return strings.Join(out, "\n")
}

// dumpPodLogs prints the tail of every container log of each control-plane
// node's static pod component (the current and earlier instances).
func (c *haCluster) dumpPodLogs(component string, lines int) {
	for _, n := range c.controlPlane() {
		logs, _ := filepath.Glob(filepath.Join(n.Root, "var/log/pods", "kube-system_"+component+"-"+n.Name+"_*", "*", "*.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			logf("%s:\n%s", l, testcluster.Tail(string(data), lines))
		}
	}
}

// dumpFailure prints what a failed run needs explaining, before the
// nodes' reset removes it: each control-plane node's kubelet log tail and
// its etcd's and apiserver's container logs.
func (c *haCluster) dumpFailure() {
	for _, n := range c.controlPlane() {
		logf("%s's kubelet log:\n%s", n.Name, n.logTail("kubelet", 40))
	}
	c.dumpPodLogs("etcd", 20)
	c.dumpPodLogs("kube-apiserver", 10)
}

// otherControlPlane is a control-plane node other than the VIP holder.
func (c *haCluster) otherControlPlane(holder string) *node {
	for _, n := range c.controlPlane() {
		if n.Name != holder {
			return n
		}
	}
	return nil
}

// stop freezes every process of the node (SIGSTOP) and unplugs it, as a
// machine that hangs; heal plugs it in and thaws them.
func (n *node) stop() (heal func() error, err error) {
	stopped := n.processes()
	for _, p := range stopped {
		_ = syscall.Kill(p.PID, syscall.SIGSTOP)
	}
	heal = func() error {
		err := n.plugIn()
		for _, p := range stopped {
			_ = syscall.Kill(p.PID, syscall.SIGCONT)
		}
		return err
	}
	if err := n.unplug(); err != nil {
		return nil, errors.Join(err, heal())
	}
	return heal, nil
}

// kill sends SIGKILL to the node's process of binary.
func (n *node) kill(binary string) error {
	p, err := n.process(binary)
	if err != nil {
		return err
	}
	return syscall.Kill(p.PID, syscall.SIGKILL)
}

// unplug takes the node's cable out of the switch: its port there goes down,
// its own link, addresses and routes stay as they were.
func (n *node) unplug() error {
	return runCmd("ip", "-n", n.Switch.Netns, "link", "set", n.Port, "down")
}

// plugIn puts the cable back.
func (n *node) plugIn() error {
	return runCmd("ip", "-n", n.Switch.Netns, "link", "set", n.Port, "up")
}

func runCmd(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// fillDisk fills the file system holding dir with a file, which it returns.
func fillDisk(dir string) (string, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", fmt.Errorf("statfs %s: %w", dir, err)
	}
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// Allocate what is free, in ever smaller pieces as the last ones fail.
	var off int64
	for size := int64(st.Bavail) * st.Bsize; size >= 4096; {
		if err := syscall.Fallocate(int(f.Fd()), 0, off, size); err != nil {
			size /= 2
			continue
		}
		off += size
	}
	return name, nil
}

func TestEtcdLinesBetween(t *testing.T) {
	log := strings.Join([]string{
		`2026-12-05T02:00:00.5Z stderr F {"level":"info","logger":"raft","msg":"before"}`,
		`2026-12-05T02:00:01.5Z stderr F {"level":"info","logger":"raft","msg":"elected"}`,
		`2026-12-05T02:00:02Z stderr F {"level":"info","msg":"trace"}`,
		`2026-12-05T02:00:02.5Z stderr F {"level":"warn","msg":"read index"}`,
		`2026-12-05T02:00:03Z stderr F {"level":"warn","msg":"dropped internal Raft message since sending buffer is full"}`,
		`2026-12-05T02:00:09Z stderr F {"level":"error","msg":"after"}`,
		`not a log line`,
	}, "\n")
	from, to := time.Date(2026, 12, 5, 2, 0, 1, 0, time.UTC), time.Date(2026, 12, 5, 2, 0, 5, 0, time.UTC)
	got := etcdLinesBetween(log, from, to, 60)
	if !strings.Contains(got, "elected") || !strings.Contains(got, "read index") || strings.Count(got, "\n") != 1 {
		t.Errorf("lines between = %q, want the raft line and the warning only", got)
	}
	if got := etcdLinesBetween(log, from, to, 1); !strings.HasSuffix(got, "... 1 more") {
		t.Errorf("capped at one line = %q", got)
	}
}
