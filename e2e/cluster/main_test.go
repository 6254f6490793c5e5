package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/netnsnode"
)

// The host node's address and name. The address, a /24, is on the host's
// end of its veth pair to the suite's own switch (see netnsnode.Switch),
// which the worker "nodes" of the multi-node test join too, so that nothing
// the cluster sends leaves this machine.
const (
	nodeIP   = "10.213.7.1"
	nodeName = "trireme-e2e-cluster"
)

var suiteSwitch = netnsnode.Switch{
	Netns:     "trclsw",
	Bridge:    "trclbr0",
	HostIface: "trclhost0",
	HostPort:  "trclhostp",
	HostAddr:  netip.MustParsePrefix(nodeIP + "/24"),
}

// clusterConfig is init's --config: the kubelet must neither evict pods nor
// collect the imported images (which no registry could give back) on a build
// machine's busy disk, and re-reads volumes often; the controller-manager marks a
// silent node NotReady quickly, so that the eviction test stays short.
const clusterConfig = `apiVersion: triremeadm.config.trireme.dev/v1alpha1
kind: ClusterConfiguration
controllerManager:
  extraArgs:
  - {name: node-monitor-grace-period, value: 20s}
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard: {"nodefs.available": "1%", "imagefs.available": "1%", "memory.available": "50Mi"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
syncFrequency: 10s
`

// nodeConfig is clusterConfig for a node whose pods' cgroups go below
// cgroupRoot, so that no node's reset touches another's.
func nodeConfig(cgroupRoot string) []byte {
	return netnsnode.KubeletConfig(clusterConfig, cgroupRoot)
}

// cgroupRoot is a node's own cgroup root.
func cgroupRoot(node string) string { return "/trireme-e2e-" + node }

var suite struct {
	root, admin, adm, config string
	initFlags                []string
	joinCommand              string
	initToReady              time.Duration
	readyAt                  time.Time
	results                  map[string]bool
	order                    []string
}

// begin records the test's outcome for the suite's summary line.
func begin(t *testing.T) {
	t.Helper()
	if suite.results == nil {
		suite.results = map[string]bool{}
	}
	name := t.Name()
	suite.order = append(suite.order, name)
	t.Cleanup(func() { suite.results[name] = !t.Failed() })
}

func summary(extra map[string]bool) (passed, failed int) {
	for _, name := range suite.order {
		if suite.results[name] {
			passed++
		} else {
			failed++
			fmt.Printf("e2e/cluster: FAILED %s\n", name)
		}
	}
	for name, ok := range extra {
		if ok {
			passed++
		} else {
			failed++
			fmt.Printf("e2e/cluster: FAILED %s\n", name)
		}
	}
	return passed, failed
}

func TestMain(m *testing.M) {
	if os.Getenv("TRIREME_E2E_CLUSTER") != "1" {
		fmt.Println("e2e/cluster: opt-in (it installs a cluster on this host); set TRIREME_E2E_CLUSTER=1")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	adm, err := testcluster.Binary("triremeadm")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	root, err := os.MkdirTemp("", "trireme-e2e-cluster-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	suite.root, suite.adm, suite.admin = root, adm, filepath.Join(root, "etc/trireme/admin.conf")
	// The machine is cleaned up even when the suite is interrupted or hangs: go
	// test's -timeout kills the binary without running deferred code, so the
	// suite stops itself first.
	var once sync.Once
	abort := func(why string) {
		once.Do(func() {
			fmt.Printf("e2e/cluster: %s: resetting the cluster\n", why)
			dumpLogs()
			if err := teardown(); err != nil {
				fmt.Println(err)
			}
			os.Exit(1)
		})
	}
	watchdog := time.AfterFunc(suiteTimeout, func() { abort(fmt.Sprintf("suite still running after %s", suiteTimeout)) })
	defer watchdog.Stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() { abort(fmt.Sprint("signal ", <-sigs)) }()
	code := 0
	extra := map[string]bool{}
	if err := setup(); err != nil {
		fmt.Println("e2e/cluster setup:", err)
		dumpLogs()
		extra["setup (triremeadm init --single-node)"] = false
		code = 1
	} else {
		extra["setup (triremeadm init --single-node)"] = true
		code = m.Run()
		if code != 0 {
			dumpLogs()
		}
	}
	watchdog.Stop()
	signal.Stop(sigs)
	var resetErr error
	once.Do(func() { resetErr = teardown() })
	if err := resetErr; err != nil {
		fmt.Printf("e2e/cluster: reset left something behind:\n%v\n", err)
		extra["reset (nothing left behind)"] = false
		code = 1
	} else {
		extra["reset (nothing left behind)"] = true
	}
	passed, failed := summary(extra)
	fmt.Printf("e2e/cluster: %d passed, %d failed\n", passed, failed)
	if failed > 0 && code == 0 {
		code = 1
	}
	return code
}

func admArgs(args ...string) []string {
	return append(args, "--root-dir", suite.root)
}

// suiteTimeout bounds the whole suite, below the Makefile's go test -timeout.
const suiteTimeout = 40 * time.Minute

func setup() error {
	if err := prepareHost(); err != nil {
		return err
	}
	if err := writeCloudConfig(false); err != nil {
		return err
	}
	flags := []string{"--apiserver-advertise-address", nodeIP, "--node-name", nodeName, "--config", suite.config, "--cloud-provider", "external"}
	suite.initFlags = flags
	start := time.Now()
	out, err := exec.Command(suite.adm, admArgs(append([]string{"init", "--single-node"}, flags...)...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("init: %w\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		// Where init's time goes: each phase and each addon's wait.
		if strings.Contains(l, " ... ok (") || strings.HasPrefix(l, "addon ") {
			fmt.Printf("e2e/cluster: init: %s\n", l)
		}
	}
	suite.joinCommand = netnsnode.JoinCommand(string(out))
	if _, err := kubectl("wait", "--for=condition=Ready", "node/"+nodeName, "--timeout=120s"); err != nil {
		return err
	}
	suite.initToReady = time.Since(start)
	suite.readyAt = time.Now()
	fmt.Printf("e2e/cluster: triremeadm init to a Ready node: %s\n", suite.initToReady.Round(100*time.Millisecond))
	return nil
}

// prepareHost creates the suite's bridge and the host node's containerd with
// the images `make images` built, as a machine with its images pulled.
func prepareHost() error {
	// What an interrupted earlier run may have left (the names are the suite's own).
	for _, w := range []string{"trclw1", "trclw2", clientNetns} {
		_ = exec.Command("ip", "netns", "delete", w).Run()
	}
	deleteHostNetwork()
	// What `make up` sets on a fresh machine and init's preflight only checks:
	// a machine where no earlier suite's CNI bridge turned on forwarding has it off.
	if err := nodeSysctls(); err != nil {
		return err
	}
	suite.config = filepath.Join(suite.root, "triremeadm.yaml")
	if err := os.WriteFile(suite.config, nodeConfig(cgroupRoot(nodeName)), 0o600); err != nil {
		return err
	}
	if err := suiteSwitch.Create(); err != nil {
		return err
	}
	flags := []string{"--apiserver-advertise-address", nodeIP, "--node-name", nodeName, "--config", suite.config}
	if out, err := exec.Command(suite.adm, admArgs(append([]string{"init", "phase", "container-runtime"}, flags...)...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("container-runtime: %w\n%s", err, out)
	}
	if out, err := exec.Command(suite.adm, "images", "import", "--dir", testcluster.ImageDir(),
		"--containerd-socket", filepath.Join(suite.root, "run/containerd/containerd.sock")).CombinedOutput(); err != nil {
		return fmt.Errorf("images import: %w\n%s", err, out)
	}
	return nil
}

// deleteHostNetwork removes the suite's switch and the host node's veth
// pair, if they are there.
func deleteHostNetwork() { suiteSwitch.Delete() }

// nodeSysctls turns on the forwarding and bridge netfilter a node needs.
func nodeSysctls() error {
	if _, err := os.Stat("/proc/sys/net/bridge/bridge-nf-call-iptables"); err != nil {
		if out, err := exec.Command("modprobe", "br_netfilter").CombinedOutput(); err != nil {
			return fmt.Errorf("modprobe br_netfilter: %w: %s", err, out)
		}
	}
	for _, f := range []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/bridge/bridge-nf-call-iptables"} {
		if err := os.WriteFile(f, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("set %s: %w", f, err)
		}
	}
	return nil
}

// podNetworkLeftovers lists what of the pod network a node's reset left in
// its network namespace (run runs a command there): flannel's device, routes
// into the pod network, flannel's nftables tables and iptables chains,
// trireme-netpol's table, the CNI plugins' iptables chains.
func podNetworkLeftovers(node string, run func(name string, args ...string) *exec.Cmd) []string {
	var problems []string
	if err := run("ip", "link", "show", "flannel.1").Run(); err == nil {
		problems = append(problems, node+": flannel's device flannel.1 is left")
	}
	if out, _ := run("ip", "route", "show", "root", "10.244.0.0/16").CombinedOutput(); strings.TrimSpace(string(out)) != "" {
		problems = append(problems, fmt.Sprintf("%s: routes into the pod network are left: %s", node, out))
	}
	if out, _ := run("nft", "list", "tables").CombinedOutput(); strings.Contains(string(out), "flannel") || strings.Contains(string(out), "trireme-netpol") {
		problems = append(problems, fmt.Sprintf("%s: flannel's or trireme-netpol's nftables tables are left: %s", node, out))
	}
	if out, _ := run("iptables-save").CombinedOutput(); strings.Contains(string(out), "FLANNEL") {
		problems = append(problems, node+": flannel's iptables chains are left")
	} else if strings.Contains(string(out), ":CNI-") {
		problems = append(problems, node+": the CNI plugins' iptables chains (portmap's, bridge's) are left")
	}
	return problems
}

// teardown resets the cluster (workers first), removes the bridge and checks
// that nothing of the cluster is left: no process, mount, nftables table or
// iptables chain of the proxy or flannel, CNI bridge, flannel device, route
// into the pod network, pod log or file below the root.
func teardown() error {
	var problems []string
	teardownWorkers()
	out, err := exec.Command(suite.adm, admArgs("reset", "-f")...).CombinedOutput()
	if err != nil {
		problems = append(problems, fmt.Sprintf("reset: %v\n%s", err, out))
	}
	if leftovers := processesBelow(suite.root); len(leftovers) > 0 {
		problems = append(problems, fmt.Sprintf("processes: %v", leftovers))
		for _, l := range leftovers {
			if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if mounts := netnsnode.MountsBelow(suite.root); len(mounts) > 0 {
		problems = append(problems, fmt.Sprintf("mounts: %v", mounts))
	}
	if out, _ := exec.Command("nft", "list", "tables").CombinedOutput(); strings.Contains(string(out), "trireme") || strings.Contains(string(out), "kube-proxy") {
		problems = append(problems, fmt.Sprintf("nftables: %s", out))
	}
	if out, _ := exec.Command("iptables-save").CombinedOutput(); strings.Contains(string(out), "KUBE-") || strings.Contains(string(out), "TRIREME") {
		problems = append(problems, "iptables chains of the proxy are left")
	}
	if _, err := net.InterfaceByName("trireme0"); err == nil {
		problems = append(problems, "the CNI bridge trireme0 is left")
	}
	problems = append(problems, podNetworkLeftovers(nodeName, exec.Command)...)
	problems = append(problems, workerLeftovers...)
	for _, node := range append([]string{nodeName}, workerNames()...) {
		for _, hierarchy := range []string{"memory", "unified"} {
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", hierarchy, cgroupRoot(node))); err == nil {
				problems = append(problems, fmt.Sprintf("the %s cgroups of %s's pods are left", hierarchy, node))
			}
		}
	}
	keep := []string{suite.config, cloudConfigPath()}
	for _, w := range workers {
		keep = append(keep, w.config())
	}
	if files := filesBelow(suite.root, keep...); len(files) > 0 {
		problems = append(problems, fmt.Sprintf("files: %v", files))
	}
	deleteHostNetwork()
	for _, m := range netnsnode.MountsBelow(suite.root) {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
	_ = os.RemoveAll(suite.root)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// filesBelow lists the regular files and symlinks below dir that reset should
// have removed: all but the suite's own (keep), the logs under /var/log/trireme
// and containerd's root with the imported images, which reset keeps as kubeadm
// does, and the scheduled etcd snapshots, the way back after a reset.
func filesBelow(dir string, keep ...string) []string {
	var out []string
	kept := func(p string) bool {
		return strings.HasSuffix(p, "/var/log/trireme") || strings.HasSuffix(p, "/var/lib/containerd") ||
			strings.HasSuffix(p, "/var/lib/trireme/etcd-snapshots")
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && kept(p) {
				return filepath.SkipDir
			}
			return nil
		}
		for _, k := range keep {
			if p == k {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	return out
}

func dumpLogs() {
	for _, n := range []string{"kubelet", "containerd"} {
		data, _ := os.ReadFile(filepath.Join(suite.root, "var/log/trireme", n+".log"))
		lines := strings.Split(string(data), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Printf("--- %s.log (tail)\n%s\n", n, strings.Join(lines, "\n"))
	}
}

// kubectl runs kubectl as the cluster's admin.
func kubectl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", suite.admin}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// processesBelow lists the PIDs whose command line names a path below dir: the
// cluster's own processes, told apart from other runs' by the root directory.
func processesBelow(dir string) []string {
	var out []string
	for _, p := range procs() {
		if strings.Contains(p.Cmdline, dir) {
			out = append(out, strconv.Itoa(p.PID)+" "+p.Cmdline)
		}
	}
	return out
}

// proc is a process of this machine.
type proc = netnsnode.Process

func procs() []proc { return netnsnode.Processes() }

func kubectlStdin(stdin string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", suite.admin}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
