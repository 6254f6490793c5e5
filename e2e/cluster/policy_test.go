package cluster

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// netpolNS is TestNetworkPolicy's namespace.
const netpolNS = "np-e2e"

// netpolWorkload is a web server on the host node behind a ClusterIP
// Service, and busybox clients: "client" pods (one per node of {{nodes}})
// and an "other" one on the host node that no policy lets in.
const netpolWorkload = `apiVersion: v1
kind: Namespace
metadata: {name: np-e2e}
---
apiVersion: v1
kind: Pod
metadata: {name: server, namespace: np-e2e, labels: {app: server}}
spec:
  terminationGracePeriodSeconds: 1
  nodeSelector: {kubernetes.io/hostname: {{host}}}
  containers:
  - name: web
    image: %[1]s
    command: ["sh", "-c", "mkdir -p /www && echo netpol-ok > /www/index.html && exec httpd -f -p 8080 -h /www"]
    ports: [{containerPort: 8080}]
    # The kubelet probes from the node: under a default-deny policy too.
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1, failureThreshold: 2}
---
apiVersion: v1
kind: Service
metadata: {name: server, namespace: np-e2e}
spec:
  selector: {app: server}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: np-e2e, labels: {app: other}}
spec:
  terminationGracePeriodSeconds: 1
  nodeSelector: {kubernetes.io/hostname: {{host}}}
  containers:
  - {name: main, image: "%[1]s", command: ["sleep", "3600"]}
`

// netpolClient is a client pod pinned to node {{node}}.
const netpolClient = `apiVersion: v1
kind: Pod
metadata: {name: {{name}}, namespace: np-e2e, labels: {app: client}}
spec:
  terminationGracePeriodSeconds: 1
  nodeSelector: {kubernetes.io/hostname: {{node}}}
  containers:
  - {name: main, image: "%[1]s", command: ["sleep", "3600"]}
`

const denyIngress = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny, namespace: np-e2e}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`

const allowClients = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: server-from-clients, namespace: np-e2e}
spec:
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: client}}}]
    ports: [{port: 8080}]
`

// adminDenyClients is a ClusterNetworkPolicy of the Admin tier that the
// server's NetworkPolicy cannot override.
const adminDenyClients = `apiVersion: policy.networking.k8s.io/v1beta1
kind: ClusterNetworkPolicy
metadata: {name: np-e2e-deny-clients}
spec:
  tier: Admin
  priority: 10
  subject: {pods: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: np-e2e}}, podSelector: {matchLabels: {app: server}}}}
  ingress:
  - {name: no-clients, action: Deny, from: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: client}}}}]}
`

// TestNetworkPolicy: the trireme-netpol addon runs Ready on the nodes, and
// enforces NetworkPolicy on the real pod network (flannel, trireme-proxy):
// clients on the server's node and on a worker reach it through its
// ClusterIP Service; a default-deny ingress policy cuts them off while the
// kubelet's readiness probe and the node itself still reach it; a policy
// allowing the clients' labels lets them (and not the other pod) in again.
func TestNetworkPolicy(t *testing.T) {
	begin(t)
	// The worker TestMultiNode left Ready, if any: a client there reaches the
	// server through the overlay.
	nodes := []string{nodeName}
	for _, w := range workerNames() {
		if s, err := kubectl("get", "node", w, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`); err == nil && s == "True" {
			nodes = append(nodes, w)
			break
		}
	}
	checkNetpolPods(t, nodes)
	t.Cleanup(func() {
		if out, err := kubectl("delete", "namespace", netpolNS, "--timeout=90s"); err != nil {
			t.Errorf("delete namespace %s: %v\n%s", netpolNS, err, out)
		}
	})
	apply(t, strings.ReplaceAll(netpolWorkload, "{{host}}", nodeName))
	clients := map[string]string{} // pod: node
	for i, node := range nodes {
		name := fmt.Sprintf("client-%d", i)
		clients[name] = node
		apply(t, strings.NewReplacer("{{name}}", name, "{{node}}", node).Replace(netpolClient))
	}
	for _, pod := range append([]string{"server", "other"}, slices.Sorted(maps.Keys(clients))...) {
		must(t, "-n", netpolNS, "wait", "--for=condition=Ready", "pod/"+pod, "--timeout=120s")
	}
	svc := must(t, "-n", netpolNS, "get", "service", "server", "-o", "jsonpath={.spec.clusterIP}")
	reaches := func(pod string) error {
		body, err := httpGet(netpolNS, pod, svc, "80")
		if err == nil && body != "netpol-ok\n" {
			err = fmt.Errorf("answered %q", body)
		}
		return err
	}
	blocked := func(pod string) func() error {
		return func() error {
			if err := reaches(pod); err == nil {
				return fmt.Errorf("%s still reaches the server", pod)
			}
			return nil
		}
	}

	for pod, node := range clients {
		slowly.ForNil(t, 30*time.Second, "no policy: "+pod+" on "+node+" reaching the server's Service", func() error { return reaches(pod) })
	}
	slowly.ForNil(t, 30*time.Second, "no policy: other reaching the server's Service", func() error { return reaches("other") })

	applyVerbatim(t, denyIngress)
	for pod, node := range clients {
		slowly.ForNil(t, 30*time.Second, "default deny: "+pod+" on "+node+" cut off", blocked(pod))
	}
	slowly.ForNil(t, 30*time.Second, "default deny: other cut off", blocked("other"))
	// Two probe periods of failures would take the server out of its
	// Service: it stays Ready, and the node still reaches it.
	time.Sleep(3 * time.Second)
	if ready := must(t, "-n", netpolNS, "get", "pod", "server", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`); ready != "True" {
		t.Errorf("default deny: the server's readiness is %q: the kubelet's probe no longer reaches it", ready)
	}
	slowly.ForNil(t, 10*time.Second, "default deny: the node reaching the server's Service", func() error {
		return hostGet(net.JoinHostPort(svc, "80"), "netpol-ok\n")
	})

	applyVerbatim(t, allowClients)
	for pod, node := range clients {
		slowly.ForNil(t, 30*time.Second, "allowed: "+pod+" on "+node+" reaching the server again", func() error { return reaches(pod) })
	}
	if err := reaches("other"); err == nil {
		t.Errorf("allowed clients only: the pod labelled app=other reaches the server too")
	}

	// The chart installs the ClusterNetworkPolicy CRD; an Admin tier Deny
	// wins over the NetworkPolicy that lets the clients in.
	must(t, "get", "crd", "clusternetworkpolicies.policy.networking.k8s.io")
	applyVerbatim(t, adminDenyClients)
	t.Cleanup(func() { _, _ = kubectl("delete", "clusternetworkpolicy", "np-e2e-deny-clients") })
	for pod, node := range clients {
		slowly.ForNil(t, 60*time.Second, "admin deny: "+pod+" on "+node+" cut off", blocked(pod))
	}
}

// checkNetpolPods waits for the trireme-netpol addon's pod on each of nodes
// to be Ready: its table is written.
func checkNetpolPods(t *testing.T, nodes []string) {
	t.Helper()
	for _, node := range nodes {
		slowly.ForNil(t, 60*time.Second, "trireme-netpol Ready on "+node, func() error {
			out, err := kubectl("-n", "kube-system", "get", "pods", "-l", "app.kubernetes.io/name=trireme-netpol",
				"--field-selector", "spec.nodeName="+node, "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`)
			if err == nil && (!strings.Contains(out, "=True") || strings.Contains(out, "=False")) {
				err = fmt.Errorf("pods %q", out)
			}
			return err
		})
	}
}
