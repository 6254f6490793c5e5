package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricsWorkload: a pod that burns CPU until /tmp/stop exists, an idle pod,
// and a Deployment whose pods burn CPU while /tmp/on exists in them, scaled on
// CPU by an autoscaling/v2 HPA with no stabilization window (the default five
// minutes of scale-down would outlast the test). CPU limits keep the burners
// from starving the build machine.
const metricsWorkload = `apiVersion: v1
kind: Namespace
metadata: {name: metrics-e2e}
---
apiVersion: v1
kind: Pod
metadata: {name: burner, namespace: metrics-e2e}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: burn
    image: %[1]s
    command: ["sh", "-c", "while [ ! -f /tmp/stop ]; do :; done; exec sleep 3600"]
    resources: {requests: {cpu: 100m}, limits: {cpu: 500m}}
  - name: idle
    image: %[1]s
    command: ["sleep", "3600"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: scaled, namespace: metrics-e2e}
spec:
  replicas: 1
  selector: {matchLabels: {app: scaled}}
  template:
    metadata: {labels: {app: scaled}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: %[1]s
        command: ["sh", "-c", "while :; do if [ -f /tmp/on ]; then :; else sleep 1; fi; done"]
        resources: {requests: {cpu: 100m}, limits: {cpu: 200m}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: scaled, namespace: metrics-e2e}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: scaled}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleUp: {stabilizationWindowSeconds: 0}
    scaleDown:
      stabilizationWindowSeconds: 0
      policies: [{type: Percent, value: 100, periodSeconds: 15}]
`

// idleRSSTarget is the resident memory metrics-server should stay under when
// idle on the suite's cluster (issue 20's budget); the test prints the figure.
const idleRSSTarget = 40.0

// TestMetrics, on the nodes of the multi-node test: every kubelet serves with
// a certificate from an approved kubelet-serving CSR that the cluster CA
// verifies, and metrics-server verifies them so (no --kubelet-insecure-tls);
// the aggregator trusts metrics-server through the APIService's caBundle (no
// insecureSkipTLSVerify), which a helm upgrade keeps; kubectl top nodes, top
// pods -A and --containers show figures that follow a pod burning CPU up and
// down; an HPA on CPU scales a Deployment from 1 up under load and back to 1
// after it.
func TestMetrics(t *testing.T) {
	begin(t)
	t.Run("kubelet serving certificates", testKubeletServingCerts)
	t.Run("verified TLS both ways", testMetricsTLS)
	must(t, "wait", "--for=condition=Available", "apiservice/v1beta1.metrics.k8s.io", "--timeout=120s")
	t.Run("idle RSS", func(t *testing.T) {
		rss := idleRSSMiB(t, "metrics-server")
		fmt.Printf("e2e/cluster: idle RSS %-28s %6.1f MiB (target %.0f MiB)\n", "metrics-server", rss, idleRSSTarget)
	})
	t.Run("top nodes", func(t *testing.T) {
		slowly.ForNil(t, 90*time.Second, "kubectl top nodes", func() error {
			out, err := kubectl("top", "nodes", "--no-headers")
			if err != nil {
				return err
			}
			figures := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				// NAME CPU(cores) CPU% MEMORY(bytes) MEMORY%
				if f := strings.Fields(line); len(f) >= 5 && millicores(f[1]) > 0 && strings.HasSuffix(f[3], "Mi") {
					figures[f[0]] = true
				}
			}
			for _, n := range readyNodeNames(t) {
				if !figures[n] {
					return fmt.Errorf("no figures for Ready node %s: %q", n, out)
				}
			}
			return nil
		})
	})
	apply(t, metricsWorkload)
	t.Cleanup(func() { _, _ = kubectl("delete", "namespace", "metrics-e2e", "--wait=false") })
	must(t, "-n", "metrics-e2e", "wait", "--for=condition=Ready", "pod/burner", "--timeout=60s")

	t.Run("top pods follows a burning pod", func(t *testing.T) {
		slowly.ForNil(t, 90*time.Second, "burning container above 200m", func() error {
			burn, idle, err := topContainers("burner")
			if err == nil && (burn < 200 || idle > 20) {
				err = fmt.Errorf("burn %dm, idle %dm", burn, idle)
			}
			return err
		})
		start := time.Now()
		out := must(t, "top", "pods", "-A", "--no-headers")
		fmt.Printf("e2e/cluster: kubectl top pods -A (%d pods): %s\n", strings.Count(out, "\n"), time.Since(start).Round(time.Millisecond))
		for _, want := range []string{"metrics-e2e ", "kube-system "} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl top pods -A lacks namespace %q:\n%s", want, out)
			}
		}
		if _, err := execIn("metrics-e2e", "burner", "touch /tmp/stop"); err != nil {
			t.Fatal(err)
		}
		slowly.ForNil(t, 90*time.Second, "burning container back below 50m", func() error {
			burn, _, err := topContainers("burner")
			if err == nil && burn >= 50 {
				err = fmt.Errorf("burn %dm", burn)
			}
			return err
		})
	})
	t.Run("HPA scales on CPU", func(t *testing.T) {
		must(t, "-n", "metrics-e2e", "rollout", "status", "deployment/scaled", "--timeout=60s")
		slowly.ForNil(t, 90*time.Second, "HPA reads the pods' CPU", func() error {
			out, err := kubectl("-n", "metrics-e2e", "get", "hpa", "scaled", "-o", "jsonpath={.status.currentMetrics[0].resource.current.averageUtilization}")
			if err == nil && out == "" {
				err = fmt.Errorf("no current CPU utilization yet")
			}
			return err
		})
		// One pod at its 200m limit is 200% of its request: the HPA wants
		// four, and its maximum is three.
		scaledPods(t, "touch /tmp/on")
		slowly.ForNil(t, 3*time.Minute, "HPA scales up under load", func() error { return replicasAtLeast(3) })
		scaledPods(t, "rm -f /tmp/on")
		slowly.ForNil(t, 3*time.Minute, "HPA scales back down after the load", func() error {
			n, err := specReplicas()
			if err == nil && n != 1 {
				err = fmt.Errorf("%d replicas", n)
			}
			return err
		})
	})
	t.Run("helm upgrade keeps the certificate", testMetricsUpgradeKeepsCert)
}

// scaledPods runs script in every pod of the scaled Deployment.
func scaledPods(t *testing.T, script string) {
	t.Helper()
	names := strings.Fields(must(t, "-n", "metrics-e2e", "get", "pods", "-l", "app=scaled",
		"--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].metadata.name}"))
	if len(names) == 0 {
		t.Fatal("no running pod of deployment/scaled")
	}
	for _, n := range names {
		if out, err := execIn("metrics-e2e", n, script); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
}

// readyNodeNames are the nodes whose Ready condition is True.
func readyNodeNames(t *testing.T) []string {
	t.Helper()
	out := must(t, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`)
	var names []string
	for _, f := range strings.Fields(out) {
		if n, ok := strings.CutSuffix(f, "=True"); ok {
			names = append(names, n)
		}
	}
	return names
}

// testMetricsTLS: the APIService trusts metrics-server through its caBundle,
// never by skipping verification, and metrics-server verifies the kubelets
// against the cluster CA rather than with --kubelet-insecure-tls.
func testMetricsTLS(t *testing.T) {
	spec := must(t, "get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "jsonpath={.spec.insecureSkipTLSVerify}/{.spec.caBundle}")
	skip, ca, _ := strings.Cut(spec, "/")
	if skip == "true" || ca == "" {
		t.Errorf("APIService v1beta1.metrics.k8s.io: insecureSkipTLSVerify %q, caBundle %d bytes", skip, len(ca))
	}
	args := must(t, "-n", "kube-system", "get", "deployment", "metrics-server", "-o", "jsonpath={.spec.template.spec.containers[0].args}")
	if strings.Contains(args, "--kubelet-insecure-tls") || !strings.Contains(args, "--kubelet-certificate-authority=") {
		t.Errorf("metrics-server's arguments do not verify the kubelets: %s", args)
	}
}

// testMetricsUpgradeKeepsCert: a helm upgrade of the release keeps the CA the
// APIService trusts (the chart reuses its Secret) and the metrics API answers.
func testMetricsUpgradeKeepsCert(t *testing.T) {
	caBundle := func() string {
		return must(t, "get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "jsonpath={.spec.caBundle}")
	}
	before := caBundle()
	// Not --wait: the flannel pod of the worker whose kubelet TestMultiNode
	// stopped never turns ready; metrics-server's rollout is waited for.
	upgradeAddons(t)
	must(t, "-n", "kube-system", "rollout", "status", "deployment/metrics-server", "--timeout=120s")
	if after := caBundle(); after != before {
		t.Error("helm upgrade replaced the APIService's CA")
	}
	must(t, "wait", "--for=condition=Available", "apiservice/v1beta1.metrics.k8s.io", "--timeout=60s")
	must(t, "top", "nodes")
}

// testKubeletServingCerts: each Ready node's kubelet-serving CSR was approved
// and its node server presents a certificate the cluster CA verifies for the
// node's IP.
func testKubeletServingCerts(t *testing.T) {
	caPEM, err := os.ReadFile(filepath.Join(suite.root, "etc/trireme/pki/ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no certificate in ca.crt")
	}
	ips := map[string]string{nodeName: nodeIP}
	for _, w := range workers {
		ips[w.Name] = w.IP.String()
	}
	for _, node := range readyNodeNames(t) {
		ip, ok := ips[node]
		if !ok {
			t.Errorf("Ready node %s is not one of the suite's", node)
			continue
		}
		t.Run(node, func(t *testing.T) {
			slowly.ForNil(t, 60*time.Second, "approved and issued kubelet-serving CSR", func() error {
				return servingCSRIssued(node)
			})
			slowly.ForNil(t, 60*time.Second, "kubelet's certificate verified by the cluster CA", func() error {
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", net.JoinHostPort(ip, "10250"),
					&tls.Config{RootCAs: pool, ServerName: ip})
				if err != nil {
					return err
				}
				return c.Close()
			})
		})
	}
}

// servingCSRIssued: a kubelet-serving CSR of node's kubelet is approved and
// has its certificate.
func servingCSRIssued(node string) error {
	out, err := kubectl("get", "csr", "-o", "json")
	if err != nil {
		return err
	}
	var list struct {
		Items []struct {
			Spec struct {
				SignerName string `json:"signerName"`
				Username   string `json:"username"`
			} `json:"spec"`
			Status struct {
				Certificate string `json:"certificate"`
				Conditions  []struct {
					Type string `json:"type"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return err
	}
	for _, c := range list.Items {
		if c.Spec.SignerName == "kubernetes.io/kubelet-serving" && c.Spec.Username == "system:node:"+node &&
			c.Status.Certificate != "" && len(c.Status.Conditions) > 0 && c.Status.Conditions[0].Type == "Approved" {
			return nil
		}
	}
	return fmt.Errorf("none for %s among %d CSRs", node, len(list.Items))
}

// topContainers is the CPU, in millicores, of the burner pod's containers.
func topContainers(pod string) (burn, idle int, err error) {
	out, err := kubectl("-n", "metrics-e2e", "top", "pod", pod, "--containers", "--no-headers")
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		// POD NAME CPU(cores) MEMORY(bytes)
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		switch f[1] {
		case "burn":
			burn, found = millicores(f[2]), found+1
		case "idle":
			idle, found = millicores(f[2]), found+1
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("kubectl top pod --containers: %q", out)
	}
	return burn, idle, nil
}

// millicores parses kubectl top's CPU column ("250m", "1"); -1 if it cannot.
func millicores(s string) int {
	if v, ok := strings.CutSuffix(s, "m"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return -1
		}
		return n
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n * 1000
}

func specReplicas() (int, error) {
	out, err := kubectl("-n", "metrics-e2e", "get", "deployment", "scaled", "-o", "jsonpath={.spec.replicas}")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

func replicasAtLeast(n int) error {
	got, err := specReplicas()
	if err == nil && got < n {
		hpa, _ := kubectl("-n", "metrics-e2e", "get", "hpa", "scaled", "--no-headers")
		err = fmt.Errorf("%d replicas (hpa: %s)", got, strings.TrimSpace(hpa))
	}
	return err
}
