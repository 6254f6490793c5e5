package cluster

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/netnsnode"
)

// worker is a node of the multi-node test (see package netnsnode), its
// address on the suite's switch.
type worker struct {
	*netnsnode.Node
}

var workers []*worker

// workerImages are the images a worker imports by default.
var workerImages = []string{"pause", "busybox", "echo", "trireme-proxy", "trireme-netpol", "coredns", "local-path-provisioner", "metrics-server", "flannel", "trireme-vip", "trireme-dashboard", "trireme-traefik"}

func newWorker(i int) *worker {
	return &worker{&netnsnode.Node{
		Name:   fmt.Sprintf("trcl-w%d", i),
		Netns:  fmt.Sprintf("trclw%d", i),
		Port:   fmt.Sprintf("trclw%dh", i),
		IP:     netip.MustParseAddr(fmt.Sprintf("10.213.7.%d", i+1)),
		Root:   filepath.Join(suite.root, fmt.Sprintf("w%d", i)),
		Switch: &suiteSwitch,
		Adm:    suite.adm,
		Images: testcluster.ImageArchives(testcluster.ImageDir(), workerImages...),
	}}
}

// join runs the exact join command init printed, in the worker's network
// namespace, with the suite's kubelet settings.
func (w *worker) join() error {
	if err := os.WriteFile(w.config(), nodeConfig(cgroupRoot(w.Name)), 0o600); err != nil {
		return err
	}
	return w.Join(suite.joinCommand+" --zone "+joinZone+" --region region-1", w.config())
}

// reset resets the worker, then deletes its network namespace; what of the pod
// network its reset left there goes to workerLeftovers, which the suite's
// teardown reports.
func (w *worker) reset() {
	if w.Exists() {
		if err := w.Reset(); err != nil {
			fmt.Printf("e2e/cluster: %v\n", err)
		}
		workerLeftovers = append(workerLeftovers, podNetworkLeftovers(w.Name, func(name string, args ...string) *exec.Cmd {
			return w.Command(append([]string{name}, args...)...)
		})...)
	}
	w.Delete()
}

// config is the worker's --config for join, beside the suite's own: the
// clean-up check keeps both.
func (w *worker) config() string {
	return filepath.Join(suite.root, "triremeadm-"+w.Name+".yaml")
}

// workerNames are the names of the workers the multi-node test made.
func workerNames() []string {
	var names []string
	for _, w := range workers {
		names = append(names, w.Name)
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
		if err := w.Create(); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("e2e/cluster: %s: network namespace, containerd and image import: %s\n", w.Name, time.Since(start).Round(100*time.Millisecond))
	}
	// The pod network between the nodes is flannel's alone (no route by
	// hand); each worker's flannel works below its root from the start.
	setFlannelNodePaths(t)
	joined := time.Now()
	for _, w := range workers {
		start := time.Now()
		if err := w.join(); err != nil {
			logs, _ := os.ReadFile(w.Log("kubelet"))
			t.Fatalf("%v\n%s", err, testcluster.Tail(string(logs), 30))
		}
		if _, err := kubectl("wait", "--for=condition=Ready", "node/"+w.Name, "--timeout=120s"); err != nil {
			logs, _ := os.ReadFile(w.Log("kubelet"))
			t.Fatalf("%v\n%s", err, testcluster.Tail(string(logs), 30))
		}
		fmt.Printf("e2e/cluster: triremeadm join to a Ready node (%s): %s\n", w.Name, time.Since(start).Round(100*time.Millisecond))
	}
	checkFlannel(t, joined)
	// Every node's pods are policed, the workers' too.
	must(t, "-n", "kube-system", "rollout", "status", "daemonset/trireme-netpol", "--timeout=120s")
	must(t, "label", "node", workers[1].Name, "trireme.dev/e2e-pool=movers")
	must(t, "label", "node", workers[0].Name, "trireme.dev/e2e-pool=movers-later")
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
			slowly.ForNil(t, 30*time.Second, fmt.Sprintf("pod on %s to pod on %s", from, to), func() error {
				body, err := httpGet("demo", src[0], dst[1], "8080")
				if err == nil && body != dst[0]+"\n" {
					err = fmt.Errorf("answered %q, want %s", body, dst[0])
				}
				return err
			})
		}
		seen := map[string]bool{}
		slowly.ForNil(t, 60*time.Second, "Service from "+from+" reaching pods on every node", func() error {
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
		slowly.ForNil(t, 60*time.Second, "UDP Service from "+from+" reaching pods on every node", func() error {
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
	checkNodesInitialized(t)
	checkLoadBalancer(t, byNode)
	checkIngressAcrossNodes(t, byNode)
	checkFlannelRestart(t, byNode)
	// Stop the second worker's kubelet: its node goes NotReady and the mover is
	// evicted and recreated on the other worker.
	must(t, "-n", "demo", "rollout", "status", "deployment/mover", "--timeout=60s")
	if n := must(t, "-n", "demo", "get", "pods", "-l", "app=mover", "-o", "jsonpath={.items[0].spec.nodeName}"); n != workers[1].Name {
		t.Fatalf("mover on %s, want %s", n, workers[1].Name)
	}
	must(t, "label", "node", workers[0].Name, "trireme.dev/e2e-pool=movers", "--overwrite")
	// Its machine leaves the inventory too: once NotReady, the CCM deletes
	// its Node.
	if err := writeCloudConfig(true); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(workers[1].Root, "var/run/trireme/kubelet.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	slowly.ForNil(t, 120*time.Second, workers[1].Name+" NotReady", func() error {
		s, err := kubectl("get", "node", workers[1].Name, "--ignore-not-found", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err == nil && s == "True" {
			err = fmt.Errorf("still Ready")
		}
		return err
	})
	slowly.ForNil(t, 60*time.Second, workers[1].Name+", NotReady and out of the inventory, deleted", func() error {
		out, err := kubectl("get", "node", workers[1].Name, "--ignore-not-found", "-o", "name")
		if err == nil && out != "" {
			err = fmt.Errorf("still there")
		}
		return err
	})
	slowly.ForNil(t, 120*time.Second, "mover recreated on "+workers[0].Name, func() error {
		out, err := kubectl("-n", "demo", "get", "pods", "-l", "app=mover", "-o", `jsonpath={range .items[*]}{.spec.nodeName}/{.status.conditions[?(@.type=="Ready")].status} {end}`)
		if err == nil && !strings.Contains(out, workers[0].Name+"/True") {
			err = fmt.Errorf("mover pods: %s", out)
		}
		return err
	})
}
