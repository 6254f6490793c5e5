package netpol_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/netns"
	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/imagefs"
)

const nodeName = "netpol-node"

// pods of the topology: namespace, labels, node.
var podSpecs = map[string]struct {
	ns, node string
	labels   map[string]string
}{
	"web":    {"np-prod", nodeName, map[string]string{"app": "web"}},
	"db":     {"np-prod", nodeName, map[string]string{"app": "db"}},
	"client": {"np-dev", nodeName, map[string]string{"app": "client"}},
	"remote": {"np-dev", "other-node", map[string]string{"app": "remote"}},
	"late":   {"np-dev", nodeName, map[string]string{"app": "late"}},
}

func TestNetworkPolicy(t *testing.T) {
	testPolicies(t, "")
}

// TestImage runs the agent from its image's file system (chrooted, in the
// node namespace), so the nft it writes the table with is the copy the
// image carries, with only the libraries it carries.
func TestImage(t *testing.T) {
	testPolicies(t, imagefs.Unpack(t, "trireme-netpol"))
}

// testPolicies checks the matrix of every case. With root set, the agent
// runs chrooted there (an unpacked image) instead of from _output/bin. Each
// run builds the same topology, so the pods and namespaces an earlier run
// recorded in the API are this one's too.
func testPolicies(t *testing.T, root string) {
	tp := newTopology(t, 40)
	cs := srv.Clientset(t)
	ctx := t.Context()
	for ns, env := range map[string]string{"np-prod": "prod", "np-dev": "dev"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"env": env}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		// No controller-manager runs here to make it.
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// The node's pod range: addresses in it that no known pod has get
	// nothing.
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}, Spec: corev1.NodeSpec{PodCIDR: "172.29.40.0/24", PodCIDRs: []string{"172.29.40.0/24"}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, name := range podNames {
		createPod(t, cs, name, tp.ips[name])
	}
	installCRD(t)
	log := startAgent(t, tp, root)

	// A row is a destination; its columns say which of web, db, client
	// and remote reach it; the last row, which pods the node reaches.
	open := []string{"web    ++++", "db     ++++", "client ++++", "remote ++++", "node   ++++"}
	both := bothRows
	cases := []matrixCase{
		{"no policy: everything open", nil, both(open...), nil},
		{"default deny ingress in prod", []*networkingv1.NetworkPolicy{
			np("np-prod", "deny", networkingv1.NetworkPolicySpec{}),
		}, both("web    +...", "db     .+..", "client ++++", "remote ++++", "node   ++++"), nil},
		{"db from web only, the rest of prod closed", []*networkingv1.NetworkPolicy{
			np("np-prod", "deny", networkingv1.NetworkPolicySpec{}),
			np("np-prod", "db-from-web", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "db"), Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "web")}}}}}),
		}, both("web    +...", "db     ++..", "client ++++", "remote ++++", "node   ++++"), nil},
		{"web from the dev namespace on TCP 80 only", []*networkingv1.NetworkPolicy{
			np("np-prod", "web-from-dev", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "web"), Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("env", "dev")}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString("http"))}},
			}}}),
		}, map[string]string{
			"tcp": "web    +.++\ndb     ++++\nclient ++++\nremote ++++\nnode   ++++\n",
			"udp": "web    +...\ndb     ++++\nclient ++++\nremote ++++\nnode   ++++\n",
		}, nil},
		{"client egress to prod's db only, over TCP", []*networkingv1.NetworkPolicy{
			np("np-dev", "client-egress", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "client"), Egress: []networkingv1.NetworkPolicyEgressRule{{
				To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("env", "prod"), PodSelector: sel("app", "db")}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP)}},
			}}}),
		}, map[string]string{
			// Without policyTypes a policy isolates ingress too, as upstream
			// defaults it: nobody but the node reaches the client now.
			"tcp": "web    ++.+\ndb     ++++\nclient ..+.\nremote ++.+\nnode   ++++\n",
			"udp": "web    ++.+\ndb     ++.+\nclient ..+.\nremote ++.+\nnode   ++++\n",
		}, nil},
		{"web from an ipBlock that excepts the remote pod", []*networkingv1.NetworkPolicy{
			np("np-prod", "web-ipblock", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "web"), Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "172.16.0.0/12", Except: []string{tp.ips["remote"] + "/32"}}}},
			}}}),
		}, both("web    +++.", "db     ++++", "client ++++", "remote ++++", "node   ++++"), nil},
	}
	for _, tc := range append(cases, clusterCases(tp)...) {
		t.Run(tc.name, func(t *testing.T) {
			setClusterPolicies(t, tc.cluster...)
			setPolicies(t, cs, tc.policies)
			for _, proto := range []string{"tcp", "udp"} {
				var got string
				deadline := time.Now().Add(15 * time.Second)
				for {
					got = transpose(tp.matrix(proto))
					if got == tc.want[proto] || time.Now().After(deadline) {
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
				if got != tc.want[proto] {
					t.Errorf("%s: who reaches whom (a row is a destination; columns: from web db client remote; last row: the node to each)\ngot:\n%swant:\n%s\nagent log:\n%s\ntable:\n%s",
						proto, got, tc.want[proto], log.Tail(20), listTable(tp))
				}
			}
		})
	}

	setClusterPolicies(t)
	// A pod on the node gets nothing until the agent knows it, and with it
	// whatever policy selects it.
	t.Run("a pod the agent does not know yet", func(t *testing.T) {
		setPolicies(t, cs, nil)
		tp.addLocal(t, "late", 3)
		tp.serve(t, "late")
		time.Sleep(500 * time.Millisecond)
		if tp.reach(tp.pods["client"], "late", "tcp") {
			t.Errorf("client reaches a pod whose address no Pod has yet")
		}
		if !tp.reach(tp.node, "late", "tcp") {
			t.Errorf("the node does not reach its new pod")
		}
		createPod(t, cs, "late", tp.ips["late"])
		// The image's run makes the same pod again.
		t.Cleanup(func() {
			_ = cs.CoreV1().Pods("np-dev").Delete(context.Background(), "late", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		})
		waitReach(t, tp, "client", "late", true)
	})

	// A policy cuts the established connections it forbids, and leaves
	// those it allows.
	t.Run("established connections", func(t *testing.T) {
		setPolicies(t, cs, nil)
		waitReach(t, tp, "client", "web", true)
		forbidden, allowed := tp.dialEcho(t, "client", "web"), tp.dialEcho(t, "db", "web")
		if !forbidden.alive() || !allowed.alive() {
			t.Fatal("echo connections do not work before any policy")
		}
		setPolicies(t, cs, []*networkingv1.NetworkPolicy{np("np-prod", "web-from-db", networkingv1.NetworkPolicySpec{
			PodSelector: *sel("app", "web"),
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "db")}}}},
		})})
		waitReach(t, tp, "client", "web", false)
		time.Sleep(500 * time.Millisecond)
		if forbidden.alive() {
			t.Errorf("client's connection to web still carries traffic after a policy forbade it\nagent log:\n%s", log.Tail(10))
		}
		if !allowed.alive() {
			t.Errorf("db's connection to web was cut though the policy allows it")
		}
		if body := metrics(t, tp); !strings.Contains(body, "trireme_netpol_connections_cut_total") || strings.Contains(body, "trireme_netpol_connections_cut_total 0\n") {
			t.Errorf("no cut connection counted:\n%s", grep(body, "connections_cut"))
		}
	})

	// The metrics count drops per pod from the table's counters.
	t.Run("metrics", func(t *testing.T) {
		setPolicies(t, cs, []*networkingv1.NetworkPolicy{np("np-prod", "deny", networkingv1.NetworkPolicySpec{})})
		time.Sleep(time.Second)
		tp.reach(tp.pods["client"], "web", "tcp")
		// The denied packets are logged, with the pod and the policy.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(log.String(), `"networkPolicies": ["np-prod/deny"]`) && time.Now().Before(deadline) {
			tp.reach(tp.pods["client"], "web", "tcp")
		}
		if denied := grep(log.String(), "Denied"); !strings.Contains(denied, `"namespace": "np-prod", "pod": "web", "networkPolicies": ["np-prod/deny"]`) || !strings.Contains(denied, `"dstPort": 80`) {
			t.Errorf("no denied packet logged with its pod and policy:\n%s\nagent log:\n%s", testcluster.Tail(denied, 5), log.Tail(15))
		}
		body := metrics(t, tp)
		if !strings.Contains(body, `trireme_netpol_dropped_packets_total{direction="ingress",namespace="np-prod",pod="web"}`) {
			t.Errorf("no drop counter for np-prod/web in /metrics:\n%s", grep(body, "trireme_netpol"))
		}
	})
}

// matrixCase is policies and the matrix they should give, for TCP and UDP.
type matrixCase struct {
	name     string
	policies []*networkingv1.NetworkPolicy
	want     map[string]string
	// cluster are ClusterNetworkPolicies, as YAML.
	cluster []string
}

// bothRows is a matrix for TCP and UDP alike.
func bothRows(rows ...string) map[string]string {
	m := strings.Join(rows, "\n") + "\n"
	return map[string]string{"tcp": m, "udp": m}
}

// waitReach waits until from reaches to over TCP, or cannot.
func waitReach(t *testing.T, tp *topology, from, to string, want bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for tp.reach(tp.pods[from], to, "tcp") != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s reaching %s is not %v after 15s", from, to, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// transpose turns the matrix (row: source) into one whose row is the
// destination, which reads as each pod's "who reaches me".
func transpose(m string) string {
	lines := strings.Split(strings.TrimSpace(m), "\n")
	var b strings.Builder
	for j, dst := range podNames {
		var row []byte
		for _, l := range lines {
			row = append(row, l[7+j])
		}
		fmt.Fprintf(&b, "%-6s %s\n", dst, row[:len(podNames)])
	}
	var node []byte
	for j := range podNames {
		node = append(node, lines[len(lines)-1][7+j])
	}
	fmt.Fprintf(&b, "%-6s %s\n", "node", node)
	return b.String()
}

func np(ns, name string, spec networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func sel(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

// setPolicies makes the test namespaces hold exactly policies.
func setPolicies(t *testing.T, cs kubernetes.Interface, policies []*networkingv1.NetworkPolicy) {
	t.Helper()
	ctx := t.Context()
	keep := map[string]bool{}
	for _, p := range policies {
		p = p.DeepCopy() // cases share policies; this one gets a resourceVersion
		keep[p.Namespace+"/"+p.Name] = true
		_, err := cs.NetworkingV1().NetworkPolicies(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			old, gerr := cs.NetworkingV1().NetworkPolicies(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			p.ResourceVersion = old.ResourceVersion
			_, err = cs.NetworkingV1().NetworkPolicies(p.Namespace).Update(ctx, p, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("apply policy %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	for _, ns := range []string{"np-prod", "np-dev"} {
		list, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.Items {
			if !keep[ns+"/"+p.Name] {
				if err := cs.NetworkingV1().NetworkPolicies(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// createPod records a pod of the topology in the API, running at addr,
// with its web port named http.
func createPod(t *testing.T, cs kubernetes.Interface, name, addr string) {
	t.Helper()
	s := podSpecs[name]
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name, Labels: s.labels},
		Spec: corev1.PodSpec{NodeName: s.node, Containers: []corev1.Container{{
			Name: "app", Image: "busybox",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}},
		}}},
	}
	created, err := cs.CoreV1().Pods(s.ns).Create(t.Context(), pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = cs.CoreV1().Pods(s.ns).Get(t.Context(), name, metav1.GetOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Phase, created.Status.PodIP, created.Status.PodIPs = corev1.PodRunning, addr, []corev1.PodIP{{IP: addr}}
	if _, err := cs.CoreV1().Pods(s.ns).UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// agentCommand is ip(8)'s arguments that run trireme-netpol with args in
// the node namespace: chrooted into root when it is set.
func agentCommand(tp *topology, root string, args ...string) []string {
	if root != "" {
		return append([]string{"netns", "exec", tp.node, "chroot", root, "/usr/local/bin/trireme-netpol"}, args...)
	}
	bin, _ := testcluster.Binary("trireme-netpol")
	return append([]string{"netns", "exec", tp.node, bin}, args...)
}

// startAgent runs trireme-netpol in the node namespace (from root, when
// set), reaching the apiserver through a relay; when the test ends it stops
// it and removes its table with --cleanup, and checks that nothing is left.
func startAgent(t *testing.T, tp *topology, root string) *testcluster.LogBuffer {
	t.Helper()
	if _, err := testcluster.Binary("trireme-netpol"); err != nil {
		t.Fatal(err)
	}
	// Chrooted, the agent reads its kubeconfig inside the image's tree.
	dir, kubeconfig := t.TempDir(), ""
	if root != "" {
		dir, kubeconfig = filepath.Join(root, "etc"), "/etc/kubeconfig"
	}
	if path := netns.RelayKubeconfig(t, tp.node, srv.KubeconfigPath(), srv.Port(), dir); kubeconfig == "" {
		kubeconfig = path
	}
	log := &testcluster.LogBuffer{}
	proc, err := testcluster.StartProcess("ip", agentCommand(tp, root,
		"--kubeconfig", kubeconfig, "--hostname-override", nodeName, "--min-sync-period", "50ms",
		"--bind-address", "127.0.0.1", "--secure-port", "10262", "--log-denied-nflog-group", "5", "--authorization-always-allow-paths", "/healthz,/metrics", "-v", "2"), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = proc.Stop(10 * time.Second)
		out, err := exec.Command("ip", agentCommand(tp, root, "--cleanup")...).CombinedOutput()
		if err != nil {
			t.Errorf("--cleanup: %v: %s", err, out)
		}
		if left := listTable(tp); left != "" {
			t.Errorf("table left after --cleanup:\n%s", left)
		}
	})
	return log
}

// metrics reads the agent's /metrics from inside the node namespace.
func metrics(t *testing.T, tp *topology) string {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: netns.Dialer(tp.node), TLSClientConfig: insecureTLS()}}
	resp, err := c.Get("https://127.0.0.1:10262/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s: %s", resp.Status, b.String())
	}
	return b.String()
}

func listTable(tp *topology) string {
	out, _ := exec.Command("ip", "netns", "exec", tp.node, "nft", "list", "table", "inet", "trireme-netpol").CombinedOutput()
	if strings.Contains(string(out), "No such file") {
		return ""
	}
	return string(out)
}

func grep(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// insecureTLS trusts the agent's self-signed serving certificate.
func insecureTLS() *tls.Config { return &tls.Config{InsecureSkipVerify: true} }
