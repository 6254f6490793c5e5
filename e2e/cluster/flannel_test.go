package cluster

import (
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"trireme.dev/e2e/internal/netnsnode"
)

// setFlannelNodePaths gives each worker flannel's directories below its own
// root (CNI conf_dir, host-local's dataDir and flanneld's run directory; the
// host's are init's, below the suite's root), with `helm upgrade` of the
// addons' release before the workers join: each gets a DaemonSet of its own,
// so no flannel pod ever writes into another node's directories on the file
// system the nodes share.
func setFlannelNodePaths(t *testing.T) {
	t.Helper()
	var nodes []*netnsnode.Node
	for _, w := range workers {
		nodes = append(nodes, w.Node)
	}
	value, err := netnsnode.FlannelNodePaths(nodes)
	if err != nil {
		t.Fatal(err)
	}
	upgradeAddons(t, value)
}

// checkFlannel waits for flannel on every node, then runs its helm test:
// every node has a range, flanneld's annotations and NetworkUnavailable=False,
// and answers at its VXLAN address through the overlay.
func checkFlannel(t *testing.T, start time.Time) {
	t.Helper()
	waitFlannel(t, append([]string{nodeName}, workerNames()...)...)
	fmt.Printf("e2e/cluster: flannel on every node: %s after the first join\n", time.Since(start).Round(100*time.Millisecond))
	checkFlannelRoutes(t)
	// The filter names every hook of the test: its ServiceAccount and pod,
	// and its ClusterRole and binding.
	mustHelm(t, "helm", "test", release, "-n", releaseNS, "--filter", "name=flannel-test,name=trireme:flannel-test", "--logs", "--timeout", "2m")
}

// checkFlannelRoutes: in every node's network namespace, the route to each
// other node's pod range is flannel's, through its VXLAN device; none goes
// through the default gateway.
func checkFlannelRoutes(t *testing.T) {
	t.Helper()
	run := map[string]func(args ...string) *exec.Cmd{nodeName: func(args ...string) *exec.Cmd { return exec.Command(args[0], args[1:]...) }}
	for _, w := range workers {
		run[w.Name] = w.Command
	}
	for from, in := range run {
		for to := range run {
			if from == to {
				continue
			}
			cidr := must(t, "get", "node", to, "-o", "jsonpath={.spec.podCIDR}")
			prefix, err := netip.ParsePrefix(cidr)
			if err != nil {
				t.Fatalf("podCIDR of %s: %v", to, err)
			}
			slowly.ForNil(t, 30*time.Second, fmt.Sprintf("flannel's route on %s to %s's pods", from, to), func() error {
				out, err := in("ip", "route", "get", prefix.Addr().Next().String()).CombinedOutput()
				if err == nil && !strings.Contains(string(out), "dev flannel.1") {
					err = fmt.Errorf("route to %s: %s", cidr, out)
				}
				return err
			})
		}
	}
}

// waitFlannel waits until the flannel DaemonSets that run on nodes are rolled
// out (each node is in one of them: the default one or its own).
func waitFlannel(t *testing.T, nodes ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	var sets []string
	slowly.ForNil(t, 60*time.Second, fmt.Sprintf("flannel pods on %v", nodes), func() error {
		out, err := kubectl("-n", releaseNS, "get", "pods", "-l", "app.kubernetes.io/name=flannel", "-o",
			`jsonpath={range .items[*]}{.spec.nodeName} {.metadata.ownerReferences[0].name}{"\n"}{end}`)
		if err != nil {
			return err
		}
		seen, found := map[string]bool{}, map[string]bool{}
		sets = nil
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) != 2 || !want[f[0]] {
				continue
			}
			found[f[0]] = true
			if !seen[f[1]] {
				seen[f[1]] = true
				sets = append(sets, f[1])
			}
		}
		if len(found) < len(want) {
			return fmt.Errorf("flannel pods on %v only", found)
		}
		return nil
	})
	for _, ds := range sets {
		if _, err := kubectl("-n", releaseNS, "rollout", "status", "daemonset/"+ds, "--timeout=120s"); err != nil {
			state, _ := kubectl("-n", releaseNS, "get", "pods", "-o", "wide")
			t.Fatalf("%v\n%s", err, state)
		}
	}
}

// checkNoSNAT: a pod on another node sees the client pod's own address.
func checkNoSNAT(t *testing.T, byNode map[string][2]string) {
	t.Helper()
	for from, src := range byNode {
		for to, dst := range byNode {
			if from == to {
				continue
			}
			slowly.ForNil(t, 30*time.Second, fmt.Sprintf("client address seen by the pod on %s from %s", to, from), func() error {
				out, err := execIn("demo", src[0], fmt.Sprintf(`printf 'GET /clientip HTTP/1.0\r\n\r\n' | nc -w 3 %s 8080`, dst[1]))
				if err != nil {
					return err
				}
				_, body, _ := strings.Cut(out, "\r\n\r\n")
				host, _, err := net.SplitHostPort(strings.TrimSpace(body))
				if err != nil {
					return fmt.Errorf("answer %q: %w", body, err)
				}
				if host != src[1] {
					return fmt.Errorf("saw %s, want the client pod's %s", host, src[1])
				}
				return nil
			})
		}
	}
}

const nodePortService = `apiVersion: v1
kind: Service
metadata: {name: everywhere-np, namespace: demo}
spec:
  type: NodePort
  selector: {app: everywhere}
  ports:
  - {name: http, port: 80, targetPort: 8080}
`

// checkNodePort: a NodePort on each node's address reaches pods on every node.
func checkNodePort(t *testing.T, byNode map[string][2]string) {
	t.Helper()
	if out, err := kubectlStdin(nodePortService, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	port := must(t, "-n", "demo", "get", "service", "everywhere-np", "-o", "jsonpath={.spec.ports[0].nodePort}")
	ips := map[string]string{nodeName: nodeIP}
	for _, w := range workers {
		ips[w.Name] = w.IP.String()
	}
	for node, ip := range ips {
		answersFromEveryPod(t, "NodePort on "+node, "http://"+net.JoinHostPort(ip, port)+"/", len(byNode))
	}
}

// checkFlannelRestart: pods on two nodes keep talking while the flannel pods
// of both nodes are deleted and recreated. A loop in the client pod asks the
// other node's pod every 100 ms; the longest run of failed requests is the gap.
func checkFlannelRestart(t *testing.T, byNode map[string][2]string) {
	t.Helper()
	src, dst := byNode[nodeName], byNode[workers[0].Name]
	const rounds = 200
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do read up _ < /proc/uptime; `+
		`if printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 1 %s 8080 | grep -q %s; then echo "ok $up"; else echo "fail $up"; fi; `+
		`usleep 100000; i=$((i+1)); done`, rounds, dst[1], dst[0])
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := execIn("demo", src[0], script)
		done <- result{out, err}
	}()
	time.Sleep(2 * time.Second)
	start := time.Now()
	for _, node := range []string{nodeName, workers[0].Name} {
		must(t, "-n", releaseNS, "delete", "pods", "-l", "app.kubernetes.io/name=flannel",
			"--field-selector", "spec.nodeName="+node, "--wait=false")
	}
	waitFlannel(t, nodeName, workers[0].Name)
	restarted := time.Since(start)
	r := <-done
	if r.err != nil {
		t.Fatalf("the request loop in %s: %v\n%s", src[0], r.err, r.out)
	}
	tries, failures, gap := requestGaps(r.out)
	if tries < rounds {
		t.Errorf("the request loop made %d requests, want %d:\n%s", tries, rounds, r.out)
	}
	if failures > 0 {
		t.Errorf("%d of %d requests between pods on two nodes failed while flannel restarted (longest gap %s)", failures, tries, gap)
	}
	fmt.Printf("e2e/cluster: flannel pods of two nodes deleted and Ready again in %s; %d requests between pods across them meanwhile, %d failed, longest gap %s\n",
		restarted.Round(100*time.Millisecond), tries, failures, gap)
}

// requestGaps reads the request loop's lines ("ok|fail <uptime seconds>"):
// how many requests, how many failed, and the longest time from a failure
// to the next success (or the last line).
func requestGaps(out string) (tries, failures int, gap time.Duration) {
	var failedSince float64 = -1
	var last float64
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		up, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		tries, last = tries+1, up
		switch {
		case f[0] == "fail":
			failures++
			if failedSince < 0 {
				failedSince = up
			}
		case failedSince >= 0:
			gap = max(gap, time.Duration((up-failedSince)*float64(time.Second)))
			failedSince = -1
		}
	}
	if failedSince >= 0 {
		gap = max(gap, time.Duration((last-failedSince)*float64(time.Second)))
	}
	return tries, failures, gap.Round(10 * time.Millisecond)
}
