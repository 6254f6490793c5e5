package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"trireme.dev/e2e/framework"
)

// The node's address: a /32 on a bridge the suite creates, so that nothing the
// cluster sends leaves this machine.
const (
	hostBridge = "trclhost0"
	nodeIP     = "10.213.7.1"
	nodeName   = "trireme-e2e-cluster"
)

var suite struct {
	root, admin, adm string
	initToReady      time.Duration
}

func TestMain(m *testing.M) {
	if os.Getenv("TRIREME_E2E_CLUSTER") != "1" {
		fmt.Println("e2e/cluster: opt-in (it installs a cluster on this host); set TRIREME_E2E_CLUSTER=1")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	adm, err := framework.Binary("triremeadm")
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
	defer teardown()
	if err := setup(); err != nil {
		fmt.Println("e2e/cluster setup:", err)
		dumpLogs()
		return 1
	}
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	return code
}

func admArgs(args ...string) []string {
	return append(args, "--root-dir", suite.root)
}

func setup() error {
	for _, c := range [][]string{
		{"ip", "link", "add", hostBridge, "type", "bridge"},
		{"ip", "addr", "add", nodeIP + "/32", "dev", hostBridge},
		{"ip", "link", "set", hostBridge, "up"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %w: %s", c, err, out)
		}
	}
	flags := []string{"--apiserver-advertise-address", nodeIP, "--node-name", nodeName}
	if out, err := exec.Command(suite.adm, admArgs(append([]string{"init", "phase", "container-runtime"}, flags...)...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("container-runtime: %w\n%s", err, out)
	}
	images := filepath.Join(filepath.Dir(framework.BinDir()), "images")
	if out, err := exec.Command(suite.adm, "images", "import", "--dir", images,
		"--containerd-socket", filepath.Join(suite.root, "run/containerd/containerd.sock")).CombinedOutput(); err != nil {
		return fmt.Errorf("images import: %w\n%s", err, out)
	}
	start := time.Now()
	out, err := exec.Command(suite.adm, admArgs(append([]string{"init", "--single-node"}, flags...)...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("init: %w\n%s", err, out)
	}
	if _, err := kubectl("wait", "--for=condition=Ready", "node/"+nodeName, "--timeout=120s"); err != nil {
		return err
	}
	suite.initToReady = time.Since(start)
	fmt.Printf("e2e/cluster: triremeadm init to a Ready node: %s\n", suite.initToReady.Round(100*time.Millisecond))
	return nil
}

func teardown() {
	out, err := exec.Command(suite.adm, admArgs("reset", "-f")...).CombinedOutput()
	if err != nil {
		fmt.Printf("e2e/cluster: reset: %v\n%s", err, out)
	}
	if leftovers := processesBelow(suite.root); len(leftovers) > 0 {
		fmt.Printf("e2e/cluster: processes left after reset: %v\n", leftovers)
	}
	_ = exec.Command("ip", "link", "delete", hostBridge).Run()
	_ = os.RemoveAll(suite.root)
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
		if strings.Contains(p.cmdline, dir) {
			out = append(out, strconv.Itoa(p.pid)+" "+p.cmdline)
		}
	}
	return out
}

type proc struct {
	pid     int
	cmdline string
	rssKiB  int
}

func procs() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		p := proc{pid: pid, cmdline: strings.ReplaceAll(strings.TrimRight(string(raw), "\x00"), "\x00", " ")}
		if f, err := os.Open(filepath.Join("/proc", e.Name(), "status")); err == nil {
			s := bufio.NewScanner(f)
			for s.Scan() {
				if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
					p.rssKiB, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				}
			}
			f.Close()
		}
		out = append(out, p)
	}
	return out
}

func kubectlStdin(stdin string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", suite.admin}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
