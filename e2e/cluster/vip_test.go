package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"trireme.dev/componentbase/testcluster"
)

// The HA cluster's virtual IP, on the suite's bridge.
const (
	haVIP      = "10.213.7.100"
	haEndpoint = haVIP + ":6443"
)

// haNode is a control-plane node of the HA test.
type haNode struct {
	name, ip, root string
	// w is the network-namespace node; nil for the host.
	w *worker
}

// cmd runs triremeadm args on the node, with its root directory.
func (n *haNode) adm(args ...string) *exec.Cmd {
	args = append(args, "--root-dir", n.root)
	if n.w == nil {
		return exec.Command(suite.adm, args...)
	}
	return n.w.Command(append([]string{suite.adm}, args...)...)
}

// TestHAControlPlane installs its own cluster, after the single-node suite:
// the host and two network-namespace nodes as control-plane nodes behind a
// virtual IP (`init --control-plane-endpoint VIP --control-plane-vip
// --upload-certs`, then `join --control-plane --certificate-key`). kubectl
// works through the VIP; etcd has three voting members; the schedulers and
// controller-managers elect one leader each; when the VIP holder's apiserver
// and VIP manager stop, the VIP moves and kubectl works again; reset of each
// node removes its etcd member and leaves nothing behind.
func TestHAControlPlane(t *testing.T) {
	begin(t)
	testStart := time.Now()
	if !suite.haOnly {
		// The single-node cluster and its workers go first: the HA nodes take
		// the same ports, names and namespaces.
		teardownWorkers()
		for _, w := range workers {
			_ = os.Remove(w.config())
		}
		workers = nil
		if out, err := exec.Command(suite.adm, admArgs("reset", "-f")...).CombinedOutput(); err != nil {
			t.Fatalf("reset of the single-node cluster: %v\n%s", err, out)
		}
	}
	host := &haNode{name: nodeName, ip: nodeIP, root: suite.root}
	nodes := []*haNode{host}
	for i := 1; i <= 2; i++ {
		w := newWorker(i)
		w.Root = filepath.Join(suite.root, fmt.Sprintf("ha%d", i))
		w.Images = imageArchives("pause", "etcd", "trireme-apiserver", "trireme-controller-manager", "trireme-scheduler", "trireme-vip")
		nodes = append(nodes, &haNode{name: w.Name, ip: w.IP.String(), root: w.Root, w: w})
		// The suite's teardown resets them too if the suite is interrupted.
		workers = append(workers, w)
	}
	t.Cleanup(func() {
		// Whatever happened: joined nodes first (each leaves etcd), then the host.
		for _, n := range nodes[1:] {
			n.w.reset()
			_ = os.Remove(n.w.config())
		}
		_ = exec.Command(suite.adm, admArgs("reset", "-f")...).Run()
	})

	// The joining nodes' network namespaces, containerd and images, while the
	// host initializes.
	var wg sync.WaitGroup
	createErrs := make([]error, len(nodes))
	for i, n := range nodes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			createErrs[i+1] = n.w.Create()
		}()
	}
	start := time.Now()
	out, err := host.adm("init", "--apiserver-advertise-address", nodeIP, "--node-name", nodeName, "--config", suite.config,
		"--control-plane-endpoint", haEndpoint, "--control-plane-vip", "--upload-certs", "--skip-phases", "addon").CombinedOutput()
	wg.Wait()
	if err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	fmt.Printf("e2e/cluster: HA: triremeadm init --control-plane-endpoint %s --upload-certs: %s\n", haEndpoint, time.Since(start).Round(100*time.Millisecond))
	for _, err := range createErrs {
		if err != nil {
			t.Fatal(err)
		}
	}
	join := controlPlaneJoinCommand(string(out))
	if join == nil {
		t.Fatalf("init printed no control-plane join command:\n%s", out)
	}
	if _, err := kubectl("--server", "https://"+haEndpoint, "get", "--raw", "/readyz"); err != nil {
		t.Fatalf("kubectl through the VIP after init: %v", err)
	}

	// Joins one at a time, as etcd changes membership one member at a time.
	for _, n := range nodes[1:] {
		start := time.Now()
		config := n.w.config()
		if err := os.WriteFile(config, nodeConfig(cgroupRoot(n.name)), 0o600); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, join...), "--node-name", n.name, "--node-ip", n.ip, "--config", config)
		if out, err := n.adm(args...).CombinedOutput(); err != nil {
			logs, _ := os.ReadFile(filepath.Join(n.root, "var/log/trireme/kubelet.log"))
			t.Fatalf("join --control-plane of %s: %v\n%s\n%s", n.name, err, out, testcluster.Tail(string(logs), 30))
		}
		fmt.Printf("e2e/cluster: HA: triremeadm join --control-plane (%s): %s\n", n.name, time.Since(start).Round(100*time.Millisecond))
	}
	for _, n := range nodes {
		must(t, "wait", "--for=condition=Ready", "node/"+n.name, "--timeout=120s")
		if out := must(t, "get", "node", n.name, "-o", "jsonpath={.metadata.labels}{.spec.taints}"); !strings.Contains(out, "node-role.kubernetes.io/control-plane") ||
			!strings.Contains(out, "NoSchedule") {
			t.Errorf("node %s is not labelled and tainted as a control-plane node: %s", n.name, out)
		}
	}
	if got := etcdMembers(t, host); len(got) != 3 {
		t.Fatalf("etcd members %v, want 3 voting members", got)
	}

	// One scheduler and one controller-manager lead; the others stand by.
	for _, lease := range []string{"kube-scheduler", "kube-controller-manager"} {
		slowly.ForNil(t, 60*time.Second, lease+" leader", func() error {
			out, err := kubectl("get", "lease", "-n", "kube-system", lease, "-o", "jsonpath={.spec.holderIdentity}")
			if err == nil && out == "" {
				err = fmt.Errorf("no holder")
			}
			return err
		})
		leaders := 0
		for _, n := range nodes {
			if leaderIn(n, lease) {
				leaders++
			}
		}
		if leaders != 1 {
			t.Errorf("%d of the 3 %s instances acquired the lease, want 1", leaders, lease)
		}
	}

	// Fail the VIP holder as a node fails: its kubelet stops first, so that
	// nothing there restarts, then its apiserver dies and its VIP manager
	// stops. (With its kubelet running, the node restarts both within
	// seconds and its manager may take the lease back under its own name.)
	holderName := vipHolder(t)
	var holder *haNode
	for _, n := range nodes {
		if n.name == holderName {
			holder = n
		}
	}
	if holder == nil {
		t.Fatalf("the VIP's lease holder %q is none of the nodes", holderName)
	}
	api := pidOf(t, "trireme-apiserver", "--advertise-address="+holder.ip)
	vipm := pidOf(t, "trireme-vip", "--node-ip="+holder.ip)
	kubeletPID, err := os.ReadFile(filepath.Join(holder.root, "var/run/trireme/kubelet.pid"))
	if err != nil {
		t.Fatal(err)
	}
	kpid, err := strconv.Atoi(strings.TrimSpace(string(kubeletPID)))
	if err != nil {
		t.Fatalf("kubelet PID file: %v", err)
	}
	start = time.Now()
	if err := syscall.Kill(kpid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(api, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(vipm, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	slowly.ForNil(t, 60*time.Second, "kubectl through the VIP after its holder failed", func() error {
		if h := vipHolder(t); h == holderName {
			return fmt.Errorf("%s still holds the VIP", h)
		}
		_, err := kubectl("--request-timeout=2s", "--server", "https://"+haEndpoint, "get", "nodes")
		return err
	})
	fmt.Printf("e2e/cluster: HA: the VIP moved from %s to %s; kubectl through it answers %s after the holder's apiserver and VIP manager stopped\n",
		holderName, vipHolder(t), time.Since(start).Round(100*time.Millisecond))

	// Reset: the joined nodes leave etcd, then the host; nothing is left.
	for i := len(nodes) - 1; i >= 1; i-- {
		n := nodes[i]
		if out, err := n.adm("reset", "-f").CombinedOutput(); err != nil {
			t.Errorf("reset %s: %v\n%s", n.name, err, out)
		} else if !strings.Contains(string(out), "removed this node's etcd member") {
			t.Errorf("reset of %s did not remove its etcd member:\n%s", n.name, out)
		}
		if out, _ := n.w.Command("ip", "-4", "addr").CombinedOutput(); strings.Contains(string(out), haVIP) {
			t.Errorf("%s still holds the VIP after reset", n.name)
		}
	}
	if got := etcdMembers(t, host); len(got) != 1 {
		t.Errorf("etcd members after the joined nodes' reset: %v, want the host's alone", got)
	}
	if out, err := exec.Command(suite.adm, admArgs("reset", "-f")...).CombinedOutput(); err != nil {
		t.Errorf("reset of the host: %v\n%s", err, out)
	}
	if out, _ := exec.Command("ip", "-4", "addr", "show", "dev", suiteSwitch.HostIface).CombinedOutput(); strings.Contains(string(out), haVIP) {
		t.Errorf("the host still holds the VIP after reset")
	}
	for _, n := range nodes {
		if left := processesBelow(n.root); len(left) > 0 && n.w != nil {
			t.Errorf("processes of %s left after reset: %v", n.name, left)
		}
	}
	for _, n := range nodes[1:] {
		n.w.reset()
		_ = os.Remove(n.w.config())
		if files := filesBelow(n.root); len(files) > 0 {
			t.Errorf("files of %s left after reset: %v", n.name, files)
		}
		_ = os.RemoveAll(n.root)
	}
	fmt.Printf("e2e/cluster: HA: whole test %s\n", time.Since(testStart).Round(100*time.Millisecond))
}

// controlPlaneJoinCommand returns the arguments (after "triremeadm") of the
// control-plane join command init printed.
func controlPlaneJoinCommand(out string) []string {
	var cmd string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "\\"))
		switch {
		case strings.HasPrefix(l, "triremeadm join ") && cmd == "":
			cmd = l
		case cmd != "" && !strings.Contains(cmd, "--certificate-key") && strings.HasPrefix(l, "--"):
			cmd += " " + l
		}
	}
	if !strings.Contains(cmd, "--control-plane --certificate-key") {
		return nil
	}
	return strings.Fields(cmd)[1:]
}

// vipHolder is the VIP Lease's holder.
func vipHolder(t *testing.T) string {
	t.Helper()
	out, err := kubectl("--request-timeout=2s", "get", "lease", "-n", "kube-system", "trireme-vip", "-o", "jsonpath={.spec.holderIdentity}")
	if err != nil {
		return ""
	}
	return out
}

// pidOf finds the one process running binary whose command line has arg.
func pidOf(t *testing.T, binary, arg string) int {
	t.Helper()
	var found []proc
	for _, p := range procs() {
		f := strings.Fields(p.cmdline)
		if len(f) > 0 && filepath.Base(f[0]) == binary && strings.Contains(p.cmdline, " "+arg) {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d processes of %s with %s, want 1", len(found), binary, arg)
	}
	return found[0].pid
}

// leaderIn reports whether the node's instance of component (its static
// pod's container log) ever acquired its lease.
func leaderIn(n *haNode, component string) bool {
	logs, _ := filepath.Glob(filepath.Join(n.root, "var/log/pods", "kube-system_"+component+"-"+n.name+"_*", "*", "*.log"))
	for _, l := range logs {
		if data, err := os.ReadFile(l); err == nil && strings.Contains(strings.ToLower(string(data)), "successfully acquired lease") {
			return true
		}
	}
	return false
}

// etcdMembers lists the voting members' names, asked through the host's
// member with its healthcheck client certificate.
func etcdMembers(t *testing.T, host *haNode) []string {
	t.Helper()
	pki := filepath.Join(host.root, "etc/trireme/pki/etcd")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "healthcheck-client.crt"), filepath.Join(pki, "healthcheck-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{"https://" + host.ip + ":2379"}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.MemberList(ctx)
	if err != nil {
		t.Fatalf("etcd member list: %v", err)
	}
	var names []string
	for _, m := range resp.Members {
		if m.IsLearner {
			names = append(names, m.Name+" (learner)")
		} else {
			names = append(names, m.Name)
		}
	}
	return names
}
