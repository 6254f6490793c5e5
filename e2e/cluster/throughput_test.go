package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// perfPod is a measurement server (the echo image's netperf) pinned to a
// node, on the pod network or the node's own.
const perfPod = `apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: perf, labels: {app: perf}}
spec:
  nodeName: %[2]s
  hostNetwork: %[3]v
  tolerations: [{operator: Exists}]
  terminationGracePeriodSeconds: 1
  containers:
  - name: echo
    image: %[4]s
    args: [-http, ":18080", -udp, "", -netperf, ":15201"]
    readinessProbe: {tcpSocket: {port: 15201}, periodSeconds: 1}
`

// perfDuration is how long each throughput measurement sends: 3 s in the
// suite, where the test checks that both backends carry traffic, and the
// issue's 10 s when `make bench-cluster` sets TRIREME_E2E_PERF_DURATION=10s
// for the figures.
var perfDuration = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TRIREME_E2E_PERF_DURATION")); err == nil && d > 0 {
		return d
	}
	return 3 * time.Second
}()

// TestPodNetworkThroughput measures the pod network between two nodes against
// the nodes' own addresses: TCP throughput for perfDuration and the median round trip
// of one byte, from a pod on the host node to a pod on the first worker,
// through VXLAN and then host-gw (the flannel addon's backends), the best of
// two alternating rounds each; and
// flanneld's idle resident memory. It prints figures and checks only that
// every measurement ran (the targets, ≥70 % of the nodes' throughput through
// VXLAN and ≥90 % through host-gw, are the report's to judge).
func TestPodNetworkThroughput(t *testing.T) {
	begin(t)
	if len(workers) == 0 {
		t.Fatal("no worker nodes: run TestMultiNode first (-run 'TestMultiNode|TestPodNetworkThroughput')")
	}
	reportFlannelRSS(t)
	image := nodeImages(t, "echo")[0].(string)
	worker := workers[0].Name
	if out, err := kubectlStdin("apiVersion: v1\nkind: Namespace\nmetadata: {name: perf}\n", "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl("delete", "namespace", "perf", "--wait=true", "--timeout=60s") })
	var manifests []string
	for _, p := range []struct {
		name, node string
		host       bool
	}{
		{"pod-client", nodeName, false}, {"pod-server", worker, false},
		{"node-client", nodeName, true}, {"node-server", worker, true},
	} {
		manifests = append(manifests, fmt.Sprintf(perfPod, p.name, p.node, p.host, image))
	}
	if out, err := kubectlStdin(strings.Join(manifests, "---\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	must(t, "-n", "perf", "wait", "--for=condition=Ready", "pod", "-l", "app=perf", "--timeout=120s")
	podIP := func(name string) string {
		return must(t, "-n", "perf", "get", "pod", name, "-o", "jsonpath={.status.podIP}")
	}
	report := func(backend string) {
		// Two rounds each, alternating, the best of each kept: the machine's
		// cores are shared, and a busy moment should not decide the ratio.
		var nodes, pods pathFigures
		for range 2 {
			nodes = nodes.best(measurePath(t, "node-client", podIP("node-server")))
			pods = pods.best(measurePath(t, "pod-client", podIP("pod-server")))
		}
		fmt.Printf("e2e/cluster: pod network %-8s %6.2f Gbit/s (%3.0f %% of the nodes' %6.2f Gbit/s), 1-byte RTT median %5.0f µs (nodes' %5.0f µs)\n",
			backend, pods.Gbps, 100*pods.Gbps/nodes.Gbps, nodes.Gbps, pods.MedianMicros, nodes.MedianMicros)
	}
	report("vxlan")

	// host-gw: flanneld restarts with routes through each node's address in
	// place of the VXLAN device; vxlan again afterwards.
	setBackend(t, "host-gw")
	t.Cleanup(func() { setBackend(t, "vxlan") })
	slowly.ForNil(t, 60*time.Second, "a route to the worker's pod range through its address", func() error {
		cidr := must(t, "get", "node", worker, "-o", "jsonpath={.spec.podCIDR}")
		out, err := exec.Command("ip", "route", "show", cidr).CombinedOutput()
		if err == nil && !strings.Contains(string(out), "via "+workers[0].IP.String()) {
			err = fmt.Errorf("route to %s: %q", cidr, out)
		}
		return err
	})
	report("host-gw")
}

// pathFigures are one path's measurements.
type pathFigures struct {
	Gbps         float64
	MedianMicros float64
}

// best keeps the higher throughput and the lower round trip of p and q.
func (p pathFigures) best(q pathFigures) pathFigures {
	if p.MedianMicros == 0 || (q.MedianMicros > 0 && q.MedianMicros < p.MedianMicros) {
		p.MedianMicros = q.MedianMicros
	}
	p.Gbps = max(p.Gbps, q.Gbps)
	return p
}

// measurePath measures from the client pod to the server at ip: throughput,
// then round trips.
func measurePath(t *testing.T, client, ip string) pathFigures {
	t.Helper()
	addr := ip + ":15201"
	var tp struct {
		Gbps float64 `json:"gbps"`
	}
	var rtt struct {
		MedianMicros float64 `json:"medianMicros"`
	}
	for _, m := range []struct {
		args []string
		into any
	}{
		{[]string{"-send", addr, "-duration", perfDuration.String()}, &tp},
		{[]string{"-rtt", addr, "-count", "2000"}, &rtt},
	} {
		out, err := kubectl(append([]string{"-n", "perf", "exec", client, "--", "/echo"}, m.args...)...)
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", client, m.args, err, out)
		}
		if err := json.Unmarshal([]byte(out), m.into); err != nil {
			t.Fatalf("%s %v printed %q: %v", client, m.args, out, err)
		}
	}
	if tp.Gbps <= 0 || rtt.MedianMicros <= 0 {
		t.Fatalf("%s to %s: %+v %+v", client, addr, tp, rtt)
	}
	return pathFigures{Gbps: tp.Gbps, MedianMicros: rtt.MedianMicros}
}

// setBackend switches the flannel addon's backend and waits for flannel to
// run with it on the host node and the first worker (the second's kubelet
// TestMultiNode stopped).
func setBackend(t *testing.T, backend string) {
	t.Helper()
	upgradeAddons(t, fmt.Sprintf("flannel.backend=%q", backend))
	waitFlannel(t, nodeName, workers[0].Name)
}

// reportFlannelRSS prints the resident memory of each node's flanneld.
func reportFlannelRSS(t *testing.T) {
	t.Helper()
	n := 0
	for _, p := range procs() {
		if f := strings.Fields(p.Cmdline); len(f) > 1 && filepath.Base(f[0]) == "flanneld" {
			n++
			fmt.Printf("e2e/cluster: idle RSS %-28s %6.1f MiB\n", fmt.Sprintf("flanneld (%d)", n), float64(p.RSSKiB)/1024)
		}
	}
	if n == 0 {
		t.Error("no flanneld process")
	}
}
