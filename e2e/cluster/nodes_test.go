package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
)

// worker is a node of the multi-node test: a network namespace with its own
// address on the suite's bridge, its own root directory (containerd root, state
// and socket, kubelet directory, CNI state, pod logs), joined with the command
// init printed, its processes started through nsenter --net so that they share
// this machine's mount namespace (the kubelet's volume mounts must be visible to
// containerd).
type worker struct {
	name, netns, veth, ip, root string
	// images are the archives create imports; default a worker's.
	images []string
}

var workers []*worker

func newWorker(i int) *worker {
	return &worker{
		name:  fmt.Sprintf("trcl-w%d", i),
		netns: fmt.Sprintf("trclw%d", i),
		veth:  fmt.Sprintf("trclw%dh", i),
		ip:    fmt.Sprintf("10.213.7.%d", i+1),
		root:  filepath.Join(suite.root, fmt.Sprintf("w%d", i)),
	}
}

func runCmd(args ...string) error {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// in runs a command in the worker's network namespace only.
func (w *worker) in(args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=/var/run/netns/" + w.netns, "--"}, args...)...)
}

func (w *worker) create() error {
	for _, c := range [][]string{
		{"ip", "netns", "add", w.netns},
		{"ip", "-n", switchNetns, "link", "add", w.veth, "type", "veth", "peer", "name", "eth0", "netns", w.netns},
		{"ip", "-n", switchNetns, "link", "set", w.veth, "master", hostBridge, "up"},
		{"ip", "-n", w.netns, "addr", "add", w.ip + "/24", "dev", "eth0"},
		{"ip", "-n", w.netns, "link", "set", "eth0", "up"},
		{"ip", "-n", w.netns, "link", "set", "lo", "up"},
		// A machine's default gateway (the host), which ClusterIPs need from
		// the node itself: without a route the kernel refuses the connection
		// before the proxy's DNAT picks the real destination. The pod ranges
		// of other nodes are flannel's routes, more specific (checkFlannel).
		{"ip", "-n", w.netns, "route", "add", "default", "via", nodeIP},
		{"ip", "netns", "exec", w.netns, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
	} {
		if err := runCmd(c...); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(w.root, 0o755); err != nil {
		return err
	}
	// The worker's containerd, first, to load the images `make images` built (as
	// a machine with its images pulled), then the join itself reuses it.
	out, err := w.in(suite.adm, "init", "phase", "container-runtime", "--root-dir", w.root,
		"--apiserver-advertise-address", w.ip, "--node-name", w.name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("container-runtime of %s: %w\n%s", w.name, err, out)
	}
	dir := filepath.Join(w.root, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	images := filepath.Join(filepath.Dir(testcluster.BinDir()), "images")
	imgs := w.images
	if imgs == nil {
		imgs = []string{"pause", "busybox", "echo", "trireme-proxy", "trireme-netpol", "coredns", "local-path-provisioner", "metrics-server", "flannel"}
	}
	for _, img := range imgs {
		if err := os.Symlink(filepath.Join(images, img+".tar"), filepath.Join(dir, img+".tar")); err != nil {
			return err
		}
	}
	out, err = exec.Command(suite.adm, "images", "import", "--dir", dir,
		"--containerd-socket", filepath.Join(w.root, "run/containerd/containerd.sock")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("images import on %s: %w\n%s", w.name, err, out)
	}
	return os.RemoveAll(dir)
}

// join runs the exact join command init printed, in the worker's network
// namespace, with the flags a test node needs (its root, name, address and the
// suite's kubelet settings).
func (w *worker) join() error {
	f := strings.Fields(suite.joinCommand)
	if len(f) < 3 || f[0] != "triremeadm" || f[1] != "join" {
		return fmt.Errorf("init printed no join command (%q)", suite.joinCommand)
	}
	args := append([]string{suite.adm}, f[1:]...)
	config := w.config()
	if err := os.WriteFile(config, nodeConfig(cgroupRoot(w.name)), 0o600); err != nil {
		return err
	}
	args = append(args, "--root-dir", w.root, "--node-name", w.name, "--node-ip", w.ip, "--config", config)
	out, err := w.in(args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// reset resets the worker, then deletes its network namespace; what of the pod
// network its reset left there goes to workerLeftovers, which the suite's
// teardown reports.
func (w *worker) reset() {
	if _, err := os.Stat("/var/run/netns/" + w.netns); err == nil {
		if out, err := w.in(suite.adm, "reset", "-f", "--root-dir", w.root).CombinedOutput(); err != nil {
			fmt.Printf("e2e/cluster: reset %s: %v\n%s", w.name, err, out)
		}
		workerLeftovers = append(workerLeftovers, podNetworkLeftovers(w.name, func(name string, args ...string) *exec.Cmd {
			return w.in(append([]string{name}, args...)...)
		})...)
	}
	_ = exec.Command("ip", "netns", "delete", w.netns).Run()
	_ = exec.Command("ip", "-n", switchNetns, "link", "delete", w.veth).Run()
}

// config is the worker's --config for join, beside the suite's own: the
// clean-up check keeps both.
func (w *worker) config() string {
	return filepath.Join(suite.root, "triremeadm-"+w.name+".yaml")
}

// workerNames are the names of the workers the multi-node test made.
func workerNames() []string {
	var names []string
	for _, w := range workers {
		names = append(names, w.name)
	}
	return names
}

// workerLeftovers are what workers' resets left in their network namespaces.
var workerLeftovers []string

// teardownWorkers resets the worker nodes of the multi-node test, if any.
func teardownWorkers() {
	for _, w := range workers {
		w.reset()
	}
}

const spread = `apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: everywhere, namespace: demo}
spec:
  selector: {matchLabels: {app: everywhere}}
  template:
    metadata:
      labels: {app: everywhere}
      # kubectl exec runs the test's nc in busybox: the echo image has no shell.
      annotations: {kubectl.kubernetes.io/default-container: tools}
    spec:
      terminationGracePeriodSeconds: 1
      tolerations: [{operator: Exists}]
      containers:
      - name: web
        image: %[2]s
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports: [{containerPort: 8080}, {containerPort: 8081, protocol: UDP}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
      - name: tools
        image: %[1]s
        command: ["sleep", "3600"]
---
apiVersion: v1
kind: Service
metadata: {name: everywhere, namespace: demo}
spec:
  selector: {app: everywhere}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: udp, port: 81, targetPort: 8081, protocol: UDP}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: mover, namespace: demo}
spec:
  replicas: 1
  selector: {matchLabels: {app: mover}}
  template:
    metadata: {labels: {app: mover}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {trireme.dev/e2e-pool: movers}
      tolerations:
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      containers:
      - name: main
        image: %[1]s
        command: ["sleep", "3600"]
`

// TestMultiNode: two workers join with the command init printed; flannel
// routes the pod network between the nodes; a DaemonSet runs on all three;
// pods, Services and NodePorts answer across nodes, pods see each other's own
// addresses, and keep talking while flannel restarts; a worker whose kubelet stops goes NotReady and its pods
// are evicted and recreated on another node.
func TestMultiNode(t *testing.T) {
	begin(t)
	for i := 1; i <= 2; i++ {
		w := newWorker(i)
		workers = append(workers, w)
		start := time.Now()
		if err := w.create(); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("e2e/cluster: %s: network namespace, containerd and image import: %s\n", w.name, time.Since(start).Round(100*time.Millisecond))
	}
	// The pod network between the nodes is flannel's alone (no route by
	// hand); each worker's flannel works below its root from the start.
	setFlannelNodePaths(t)
	joined := time.Now()
	for _, w := range workers {
		start := time.Now()
		if err := w.join(); err != nil {
			logs, _ := os.ReadFile(filepath.Join(w.root, "var/log/trireme/kubelet.log"))
			t.Fatalf("%v\n%s", err, tail(string(logs), 30))
		}
		if _, err := kubectl("wait", "--for=condition=Ready", "node/"+w.name, "--timeout=120s"); err != nil {
			logs, _ := os.ReadFile(filepath.Join(w.root, "var/log/trireme/kubelet.log"))
			t.Fatalf("%v\n%s", err, tail(string(logs), 30))
		}
		fmt.Printf("e2e/cluster: triremeadm join to a Ready node (%s): %s\n", w.name, time.Since(start).Round(100*time.Millisecond))
	}
	checkFlannel(t, joined)
	// Every node's pods are policed, the workers' too.
	must(t, "-n", "kube-system", "rollout", "status", "daemonset/trireme-netpol", "--timeout=120s")
	must(t, "label", "node", workers[1].name, "trireme.dev/e2e-pool=movers")
	must(t, "label", "node", workers[0].name, "trireme.dev/e2e-pool=movers-later")
	apply(t, spread)
	if _, err := kubectl("-n", "demo", "rollout", "status", "daemonset/everywhere", "--timeout=120s"); err != nil {
		out, _ := kubectl("get", "pods", "-A", "-o", "wide")
		t.Fatalf("%v\n%s", err, out)
	}
	out := must(t, "-n", "demo", "get", "pods", "-l", "app=everywhere", "-o", "jsonpath={range .items[*]}{.spec.nodeName} {.metadata.name} {.status.podIP}{\"\\n\"}{end}")
	byNode := map[string][2]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			byNode[f[0]] = [2]string{f[1], f[2]}
		}
	}
	if len(byNode) != 3 {
		t.Fatalf("DaemonSet pods on %d nodes, want 3:\n%s", len(byNode), out)
	}
	// Every node's pod reaches every other node's pod, and the Service.
	svc := must(t, "-n", "demo", "get", "service", "everywhere", "-o", "jsonpath={.spec.clusterIP}")
	for from, src := range byNode {
		for to, dst := range byNode {
			if from == to {
				continue
			}
			eventually(t, 30*time.Second, fmt.Sprintf("pod on %s to pod on %s", from, to), func() error {
				body, err := httpGet("demo", src[0], dst[1], "8080")
				if err == nil && body != dst[0]+"\n" {
					err = fmt.Errorf("answered %q, want %s", body, dst[0])
				}
				return err
			})
		}
		seen := map[string]bool{}
		eventually(t, 60*time.Second, "Service from "+from+" reaching pods on every node", func() error {
			body, err := httpGet("demo", src[0], svc, "80")
			if err != nil {
				return err
			}
			seen[strings.TrimSpace(body)] = true
			if len(seen) < 3 {
				return fmt.Errorf("answers so far from %v", seen)
			}
			return nil
		})
		seenUDP := map[string]bool{}
		eventually(t, 60*time.Second, "UDP Service from "+from+" reaching pods on every node", func() error {
			// busybox's nc has no UDP; the echo image's binary asks.
			out, err := kubectl("-n", "demo", "exec", src[0], "-c", "web", "--", "/echo", "-ask-udp", svc+":81")
			if err != nil {
				return err
			}
			if name := strings.TrimSpace(out); name != "" {
				seenUDP[name] = true
			}
			if len(seenUDP) < 3 {
				return fmt.Errorf("answers so far from %v", seenUDP)
			}
			return nil
		})
	}
	checkNoSNAT(t, byNode)
	checkNodePort(t, byNode)
	checkFlannelRestart(t, byNode)
	// Stop the second worker's kubelet: its node goes NotReady and the mover is
	// evicted and recreated on the other worker.
	must(t, "-n", "demo", "rollout", "status", "deployment/mover", "--timeout=60s")
	if n := must(t, "-n", "demo", "get", "pods", "-l", "app=mover", "-o", "jsonpath={.items[0].spec.nodeName}"); n != workers[1].name {
		t.Fatalf("mover on %s, want %s", n, workers[1].name)
	}
	must(t, "label", "node", workers[0].name, "trireme.dev/e2e-pool=movers", "--overwrite")
	pidFile := filepath.Join(workers[1].root, "var/run/trireme/kubelet.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, 120*time.Second, workers[1].name+" NotReady", func() error {
		s, err := kubectl("get", "node", workers[1].name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err == nil && s == "True" {
			err = fmt.Errorf("still Ready")
		}
		return err
	})
	eventually(t, 120*time.Second, "mover recreated on "+workers[0].name, func() error {
		out, err := kubectl("-n", "demo", "get", "pods", "-l", "app=mover", "-o", `jsonpath={range .items[*]}{.spec.nodeName}/{.status.conditions[?(@.type=="Ready")].status} {end}`)
		if err == nil && !strings.Contains(out, workers[0].name+"/True") {
			err = fmt.Errorf("mover pods: %s", out)
		}
		return err
	})
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
