package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"trireme.dev/e2e/framework"
)

// flannelChart is the flannel subchart of the addons chart (tests run in
// their package's directory).
const flannelChart = "../../charts/trireme-addons/charts/flannel"

// flannelNodePaths are the chart's per-node paths: each test node keeps its
// CNI configuration, host-local leases and flannel's run directory below its
// own root, on the one file system they share.
func flannelNodePaths() map[string]map[string]string {
	roots := map[string]string{nodeName: suite.root}
	for _, w := range workers {
		roots[w.name] = w.root
	}
	out := map[string]map[string]string{}
	for node, root := range roots {
		out[node] = map[string]string{
			"cniConfDir": filepath.Join(root, "etc/cni/net.d"),
			"cniDataDir": filepath.Join(root, "var/lib/cni/networks/trireme"),
			"runDir":     filepath.Join(root, "run/flannel"),
		}
	}
	return out
}

// helm runs the helm CLI (`make helm`) as the cluster's admin.
func helm(args ...string) (string, error) {
	bin, err := framework.Binary("helm")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(bin, append([]string{"--kubeconfig", suite.admin}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// installFlannel installs the flannel subchart with the test nodes' paths
// and waits until it runs on every node, then runs its helm test.
func installFlannel(t *testing.T) {
	t.Helper()
	paths, err := json.Marshal(flannelNodePaths())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := helm("install", "flannel", flannelChart, "--namespace", "kube-system",
		"--set", "global.imageTag="+imageTag(t), "--set-json", "nodePaths="+string(paths),
		"--wait", "--timeout", "120s"); err != nil {
		state, _ := kubectl("-n", "kube-system", "get", "pods", "-o", "wide")
		t.Fatalf("%v\n%s", err, state)
	}
	fmt.Printf("e2e/cluster: flannel on every node: %s\n", time.Since(start).Round(100*time.Millisecond))
	if out, err := helm("test", "flannel", "--namespace", "kube-system", "--logs", "--timeout", "60s"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// imageTag is the tag `make images` gave the images, from the host node's
// pause image reference.
func imageTag(t *testing.T) string {
	t.Helper()
	ref := nodeImages(t, "pause")[0].(string)
	return ref[strings.LastIndex(ref, ":")+1:]
}

// checkNoSNAT: a pod on another node sees the client pod's own address.
func checkNoSNAT(t *testing.T, byNode map[string][2]string) {
	t.Helper()
	for from, src := range byNode {
		for to, dst := range byNode {
			if from == to {
				continue
			}
			eventually(t, 30*time.Second, fmt.Sprintf("client address seen by the pod on %s from %s", to, from), func() error {
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
		ips[w.name] = w.ip
	}
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for node, ip := range ips {
		seen := map[string]bool{}
		eventually(t, 60*time.Second, "NodePort on "+node+" reaching pods on every node", func() error {
			resp, err := client.Get("http://" + net.JoinHostPort(ip, port) + "/")
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			seen[strings.TrimSpace(string(body))] = true
			if len(seen) < len(byNode) {
				return fmt.Errorf("answers so far from %v", seen)
			}
			return nil
		})
	}
}

// checkFlannelRestart: pods on two nodes keep talking while the flannel pods
// of both nodes are deleted and recreated.
func checkFlannelRestart(t *testing.T, byNode map[string][2]string) {
	t.Helper()
	src, dst := byNode[nodeName], byNode[workers[0].name]
	for _, node := range []string{nodeName, workers[0].name} {
		must(t, "-n", "kube-system", "delete", "pods", "-l", "app.kubernetes.io/name=flannel",
			"--field-selector", "spec.nodeName="+node, "--wait=false")
	}
	deadline := time.Now().Add(15 * time.Second)
	tries, failures := 0, 0
	for time.Now().Before(deadline) {
		tries++
		body, err := httpGet("demo", src[0], dst[1], "8080")
		if err != nil || body != dst[0]+"\n" {
			failures++
			t.Logf("while flannel restarts: %q %v", body, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if failures > 0 {
		t.Errorf("%d of %d requests between pods failed while flannel restarted", failures, tries)
	}
	for _, ds := range strings.Fields(must(t, "-n", "kube-system", "get", "daemonsets", "-l", "app.kubernetes.io/name=flannel", "-o", "jsonpath={.items[*].metadata.name}")) {
		must(t, "-n", "kube-system", "rollout", "status", "daemonset/"+ds, "--timeout=120s")
	}
	fmt.Printf("e2e/cluster: %d requests between pods on two nodes while their flannel pods restarted, %d failed\n", tries, failures)
}
