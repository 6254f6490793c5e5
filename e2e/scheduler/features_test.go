package scheduler_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"
)

const zoneKey = v1.LabelTopologyZone

func TestTaintsTolerationsAndSelectors(t *testing.T) {
	cs := srv.Clientset(t)
	createNodes(t, cs,
		nodeSpec{name: "tt-gpu", cpu: "4", labels: map[string]string{"pool": "gpu"}, taints: []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}},
		nodeSpec{name: "tt-ssd", cpu: "4", labels: map[string]string{"disk": "ssd"}},
		nodeSpec{name: "tt-plain", cpu: "4"},
	)
	ns := namespace(t, cs)

	ssd := pod("ssd", "100m")
	ssd.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	createPod(t, cs, ns, ssd)
	if node := waitScheduled(t, cs, ns, "ssd", 10*time.Second); node != "tt-ssd" {
		t.Errorf("nodeSelector disk=ssd pod went to %s", node)
	}

	gpu := pod("gpu", "100m")
	gpu.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	gpu.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"gpu"}}}}},
	}}}
	createPod(t, cs, ns, gpu)
	if node := waitScheduled(t, cs, ns, "gpu", 10*time.Second); node != "tt-gpu" {
		t.Errorf("tolerating pod with affinity to pool=gpu went to %s", node)
	}

	// Without a toleration nothing fits; upstream's message names each reason.
	intolerant := pod("intolerant", "100m")
	intolerant.Spec.NodeSelector = map[string]string{"pool": "gpu"}
	createPod(t, cs, ns, intolerant)
	msg := waitFailedScheduling(t, cs, ns, "intolerant", 10*time.Second)
	want := "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."
	if msg != want {
		t.Errorf("FailedScheduling message:\n got %q\nwant %q", msg, want)
	}

	// Plain pods avoid the tainted node.
	for i := range 4 {
		createPod(t, cs, ns, pod(fmt.Sprintf("plain-%d", i), "100m"))
	}
	for i := range 4 {
		if node := waitScheduled(t, cs, ns, fmt.Sprintf("plain-%d", i), 10*time.Second); node == "tt-gpu" {
			t.Errorf("pod without toleration landed on the tainted node")
		}
	}
}

func TestTopologySpreadOverZones(t *testing.T) {
	cs := srv.Clientset(t)
	createNodes(t, cs,
		nodeSpec{name: "ts-a1", cpu: "8", labels: map[string]string{zoneKey: "a"}},
		nodeSpec{name: "ts-a2", cpu: "8", labels: map[string]string{zoneKey: "a"}},
		nodeSpec{name: "ts-b1", cpu: "8", labels: map[string]string{zoneKey: "b"}},
	)
	ns := namespace(t, cs)
	perZone := map[string]int{}
	for i := range 6 {
		p := pod(fmt.Sprintf("web-%d", i), "100m")
		p.Labels = map[string]string{"app": "web"}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}
		createPod(t, cs, ns, p)
		// One at a time, so each placement sees the last.
		node := waitScheduled(t, cs, ns, p.Name, 10*time.Second)
		perZone[map[string]string{"ts-a1": "a", "ts-a2": "a", "ts-b1": "b"}[node]]++
	}
	if perZone["a"] != 3 || perZone["b"] != 3 {
		t.Errorf("pods per zone = %v, want 3 and 3 (skew 1 over zones of 2 and 1 nodes)", perZone)
	}
}

func TestPodAntiAffinity(t *testing.T) {
	cs := srv.Clientset(t)
	createNodes(t, cs,
		nodeSpec{name: "aa-1", cpu: "4", labels: map[string]string{zoneKey: "a"}},
		nodeSpec{name: "aa-2", cpu: "4", labels: map[string]string{zoneKey: "b"}},
		nodeSpec{name: "aa-3", cpu: "4", labels: map[string]string{zoneKey: "c"}},
	)
	ns := namespace(t, cs)
	mk := func(name string) *v1.Pod {
		p := pod(name, "100m")
		p.Labels = map[string]string{"app": "db"}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			TopologyKey:   zoneKey,
		}}}}
		return p
	}
	seen := map[string]bool{}
	for i := range 3 {
		createPod(t, cs, ns, mk(fmt.Sprintf("db-%d", i)))
		node := waitScheduled(t, cs, ns, fmt.Sprintf("db-%d", i), 10*time.Second)
		if seen[node] {
			t.Errorf("two anti-affine pods on %s", node)
		}
		seen[node] = true
	}
	createPod(t, cs, ns, mk("db-3"))
	msg := waitFailedScheduling(t, cs, ns, "db-3", 10*time.Second)
	if !strings.HasPrefix(msg, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.") {
		t.Errorf("FailedScheduling message = %q", msg)
	}

	// A pod with affinity to the db pods joins one of their zones.
	friend := pod("friend", "100m")
	friend.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		TopologyKey:   zoneKey,
	}}}}
	createPod(t, cs, ns, friend)
	if node := waitScheduled(t, cs, ns, "friend", 10*time.Second); !seen[node] {
		t.Errorf("affine pod went to %s", node)
	}
}

func TestPreemption(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	for name, value := range map[string]int32{"e2e-low": 10, "e2e-high": 1000} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create PriorityClass: %v", err)
		}
		n := name
		t.Cleanup(func() {
			_ = cs.SchedulingV1().PriorityClasses().Delete(context.Background(), n, metav1.DeleteOptions{})
		})
	}
	createNodes(t, cs, nodeSpec{name: "pre-1", cpu: "2"})
	ns := namespace(t, cs)
	low := pod("low", "1500m")
	low.Spec.PriorityClassName = "e2e-low"
	createPod(t, cs, ns, low)
	waitScheduled(t, cs, ns, "low", 10*time.Second)

	high := pod("high", "1")
	high.Spec.PriorityClassName = "e2e-high"
	createPod(t, cs, ns, high)

	// The scheduler deletes the victim; with no kubelet to finish the
	// graceful deletion, the test does (as the kubelet would).
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "low", metav1.GetOptions{})
		if isNotFound(err) {
			return true, nil
		}
		return err == nil && p.DeletionTimestamp != nil, nil
	})
	if err != nil {
		t.Fatalf("low-priority pod was not preempted")
	}
	// The nomination is written right after the victims are deleted.
	var nominated string
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		h, err := cs.CoreV1().Pods(ns).Get(ctx, "high", metav1.GetOptions{})
		if err == nil {
			nominated = h.Status.NominatedNodeName
		}
		return nominated != "", nil
	})
	if nominated != "pre-1" {
		t.Errorf("preemptor nominatedNodeName = %q, want pre-1", nominated)
	}
	zero := int64(0)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "low", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !isNotFound(err) {
		t.Fatalf("force-delete victim: %v", err)
	}
	if node := waitScheduled(t, cs, ns, "high", 10*time.Second); node != "pre-1" {
		t.Errorf("preemptor went to %s", node)
	}
}

func TestSecondProfile(t *testing.T) {
	cs := srv.Clientset(t)
	createNodes(t, cs, nodeSpec{name: "sp-busy", cpu: "4"}, nodeSpec{name: "sp-idle", cpu: "4"})
	ns := namespace(t, cs)
	filler := pod("filler", "2")
	filler.Spec.NodeName = "sp-busy"
	createPod(t, cs, ns, filler)

	spread := pod("spread", "1")
	createPod(t, cs, ns, spread)
	if node := waitScheduled(t, cs, ns, "spread", 10*time.Second); node != "sp-idle" {
		t.Errorf("default profile (LeastAllocated) placed the pod on %s, want sp-idle", node)
	}
	packed := pod("packed", "1")
	packed.Spec.SchedulerName = "second-scheduler"
	createPod(t, cs, ns, packed)
	if node := waitScheduled(t, cs, ns, "packed", 10*time.Second); node != "sp-busy" {
		t.Errorf("second profile (MostAllocated) placed the pod on %s, want sp-busy", node)
	}
	// A pod naming a scheduler that does not exist is left alone.
	other := pod("other", "1")
	other.Spec.SchedulerName = "someone-else"
	createPod(t, cs, ns, other)
	assertPending(t, cs, ns, "other", 500*time.Millisecond)
}

func TestHostPorts(t *testing.T) {
	cs := srv.Clientset(t)
	createNodes(t, cs, nodeSpec{name: "hp-1", cpu: "4"}, nodeSpec{name: "hp-2", cpu: "4"})
	ns := namespace(t, cs)
	nodes := map[string]bool{}
	for i := range 3 {
		p := pod(fmt.Sprintf("port-%d", i), "100m")
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}}
		createPod(t, cs, ns, p)
		if i < 2 {
			nodes[waitScheduled(t, cs, ns, p.Name, 10*time.Second)] = true
		}
	}
	if len(nodes) != 2 {
		t.Errorf("two pods wanting host port 8080 share a node: %v", nodes)
	}
	msg := waitFailedScheduling(t, cs, ns, "port-2", 10*time.Second)
	if !strings.HasPrefix(msg, "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.") {
		t.Errorf("FailedScheduling message = %q", msg)
	}
}

func TestSchedulingGates(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	createNodes(t, cs, nodeSpec{name: "sg-1", cpu: "4"})
	ns := namespace(t, cs)
	p := pod("gated", "100m")
	p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	createPod(t, cs, ns, p)
	assertPending(t, cs, ns, "gated", 500*time.Millisecond)
	cur, err := cs.CoreV1().Pods(ns).Get(ctx, "gated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.SchedulingGates = nil
	if _, err := cs.CoreV1().Pods(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("remove gate: %v", err)
	}
	waitScheduled(t, cs, ns, "gated", 5*time.Second)
}

func TestServingAndLease(t *testing.T) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	token := metricsReaderToken(t)
	tests := []struct {
		path, token string
		code        int
		want        string
	}{
		// Health is open to anyone, as upstream's always-allowed paths.
		{path: "/healthz", code: http.StatusOK, want: "ok"},
		{path: "/livez", code: http.StatusOK, want: "ok"},
		{path: "/readyz", code: http.StatusOK, want: "ok"},
		// Metrics and profiles need an identity the apiserver allows.
		{path: "/metrics", code: http.StatusForbidden},
		{path: "/metrics", token: "not-a-token", code: http.StatusUnauthorized},
		{path: "/metrics", token: token, code: http.StatusOK, want: "trireme_scheduler_schedule_attempts_total"},
		{path: "/debug/pprof/", code: http.StatusForbidden},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", schedPort, tt.path), nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("GET %s: %v", tt.path, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET %s (token %v) = %d %q, want %d containing %q", tt.path, tt.token != "", resp.StatusCode, truncateBody(body), tt.code, tt.want)
		}
	}
	cs := srv.Clientset(t)
	lease, err := cs.CoordinationV1().Leases("kube-system").Get(context.Background(), "kube-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("leader election Lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("Lease kube-system/kube-scheduler has no holder")
	}
}

// metricsReaderToken returns a token of a ServiceAccount that RBAC lets
// read /metrics, as a Prometheus scraper would hold.
func metricsReaderToken(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	cs := srv.Clientset(t)
	const name = "sched-metrics-reader"
	ns := "default"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ServiceAccount: %v", err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ClusterRole: %v", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ClusterRoleBinding: %v", err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	return tr.Status.Token
}

func truncateBody(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func TestInvalidConfigRefused(t *testing.T) {
	bin, err := testcluster.Binary("trireme-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	data := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Random\n"
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--config", cfg, "--kubeconfig", srv.KubeconfigPath()).CombinedOutput()
	if err == nil {
		t.Fatalf("scheduler accepted an invalid configuration:\n%s", out)
	}
	if !strings.Contains(string(out), "profiles[0].pluginConfig[0].args.scoringStrategy.type") {
		t.Errorf("error does not name the field:\n%s", out)
	}
}
