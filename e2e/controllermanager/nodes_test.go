package controllermanager_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"

	"trireme.dev/componentbase/testwait"
)

// Settings of the node controllers under test: a short grace period so a
// silent node is noticed in seconds, and a pod CIDR to carve up.
const (
	clusterCIDR      = "10.244.0.0/16"
	nodeMaskSize     = 24
	monitorGrace     = 4 * time.Second
	nodesTestTimeout = 60 * time.Second
)

// TestNodeControllers runs the node, storage and node-joining controllers
// against a real apiserver and controller-manager; the test plays the
// kubelets. It has a server of its own because its controller-manager
// flags (a short node grace period, CIDR allocation) would disturb suites
// that make Nodes without kubelets.
func TestNodeControllers(t *testing.T) {
	srv := testcluster.StartAPIServer(t, testcluster.APIServerOptions{
		ControllerManager: true,
		ExtraArgs:         []string{"--enable-bootstrap-token-auth"},
		ControllerManagerArgs: []string{
			"--allocate-node-cidrs", "--cluster-cidr", clusterCIDR, fmt.Sprintf("--node-cidr-mask-size=%d", nodeMaskSize),
			"--node-monitor-period=500ms", "--node-monitor-grace-period=" + monitorGrace.String(),
			"--node-startup-grace-period=" + monitorGrace.String(),
			"--pvclaimbinder-sync-period=1s",
			"--controllers=*,bootstrapsigner,tokencleaner",
			"--horizontal-pod-autoscaler-sync-period=1s",
		},
	})
	cs := srv.Clientset(t)
	t.Cleanup(func() {
		// Runs after the parallel subtests, before the server stops.
		if lines := srv.ControllerManagerForbidden(); len(lines) > 0 {
			t.Errorf("controllers were refused by RBAC:\n%s", strings.Join(lines, "\n"))
		}
	})
	t.Run("lifecycle", func(t *testing.T) { t.Parallel(); testNodeLifecycle(t, cs) })
	t.Run("ipam", func(t *testing.T) { t.Parallel(); testNodeIPAM(t, cs) })
	t.Run("csr", func(t *testing.T) { t.Parallel(); testCSR(t, srv, cs) })
	t.Run("persistentvolume", func(t *testing.T) { t.Parallel(); testPersistentVolume(t, cs) })
	t.Run("bootstraptokens", func(t *testing.T) { t.Parallel(); testBootstrapTokens(t, cs) })
	t.Run("horizontalpodautoscaler", func(t *testing.T) { t.Parallel(); testHorizontalPodAutoscaler(t, cs) })
}

// makeNode registers a node as a kubelet would: Ready, with addresses and
// a Lease in kube-node-lease.
func makeNode(t testing.TB, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// The controllers write the new node too (its pod CIDR, taints):
	// retry on conflicts as a kubelet does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		node.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}}
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: "10.1.2.3"}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("set status of node %s: %v", name, err)
	}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime: &metav1.MicroTime{Time: time.Now()},
		},
	}
	if _, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create lease of node %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// renewLease renews the node's Lease, as its kubelet does every few
// seconds.
func renewLease(ctx context.Context, cs kubernetes.Interface, name string) error {
	lease, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	_, err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// makeNamespace creates a namespace and waits for its default
// ServiceAccount, which pod admission needs.
func makeNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	testwait.For(t, nodesTestTimeout, "default ServiceAccount in "+name, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
}

func hasTaint(node *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func testNodeLifecycle(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	// A zone of their own: with the other subtests' kubelet-less nodes in
	// one zone, the lost node would meet the disruption rules.
	zone := map[string]string{corev1.LabelTopologyZone: "nodelifecycle-e2e"}
	// The controller first sees nl-lost, and starts its grace period,
	// after this.
	start := time.Now()
	makeNode(t, cs, "nl-healthy", zone)
	makeNode(t, cs, "nl-lost", zone)
	renewCtx, stopRenewing := context.WithCancel(ctx)
	defer stopRenewing()
	go func() {
		for renewCtx.Err() == nil {
			_ = renewLease(renewCtx, cs, "nl-healthy")
			time.Sleep(500 * time.Millisecond)
		}
	}()

	const ns = "nodelifecycle-e2e"
	makeNamespace(t, cs, ns)
	pod := func(name string, seconds *int64) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{
				NodeName:   "nl-lost",
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
				Tolerations: []corev1.Toleration{{
					Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
					Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds,
				}},
			},
		}
	}
	for _, p := range []*corev1.Pod{pod("short", ptr.To[int64](2)), pod("forever", nil)} {
		created, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
		// Play the kubelet: the pod runs and is ready.
		created.Status.Phase = corev1.PodRunning
		created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("set status of pod %s: %v", p.Name, err)
		}
	}

	var tainted, added time.Time
	testwait.For(t, nodesTestTimeout, "nl-lost marked Unknown and tainted unreachable", func(ctx context.Context) (bool, error) {
		node, err := cs.CoreV1().Nodes().Get(ctx, "nl-lost", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range node.Status.Conditions {
			if c.Type != corev1.NodeReady {
				continue
			}
			if c.Status != corev1.ConditionUnknown {
				return false, nil
			}
			if c.Reason != "NodeStatusUnknown" || c.Message != "Kubelet stopped posting node status." {
				return false, fmt.Errorf("ready condition %+v", c)
			}
		}
		ok := hasTaint(node, corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule) && hasTaint(node, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
		if ok {
			tainted = time.Now()
			for _, taint := range node.Spec.Taints {
				if taint.Effect == corev1.TaintEffectNoExecute && taint.TimeAdded != nil {
					added = taint.TimeAdded.Time
				}
			}
		}
		return ok, nil
	})
	if d := tainted.Sub(start); d < monitorGrace {
		t.Errorf("node tainted %s after it was made, before the %s grace period", d, monitorGrace)
	}
	t.Logf("nl-lost tainted after %s", tainted.Sub(start).Round(100*time.Millisecond))

	testwait.For(t, nodesTestTimeout, "pod short evicted", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "short", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return p != nil && p.DeletionTimestamp != nil, err
	})
	// timeAdded is stored to the second, so the toleration runs from the
	// truncated time, as upstream's does.
	if added.IsZero() {
		t.Errorf("NoExecute taint has no timeAdded")
	} else if d := time.Since(added); d < 2*time.Second {
		t.Errorf("pod short evicted %s after the taint's timeAdded, before its 2s toleration", d)
	}
	forever, err := cs.CoreV1().Pods(ns).Get(ctx, "forever", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod forever, which tolerates the taint for ever, is gone: %v", err)
	}
	for _, c := range forever.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionFalse {
			t.Errorf("pod forever on the lost node still Ready=%s", c.Status)
		}
	}
	healthy, err := cs.CoreV1().Nodes().Get(ctx, "nl-healthy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(healthy.Spec.Taints) != 0 {
		t.Errorf("renewing node nl-healthy got taints %v", healthy.Spec.Taints)
	}

	// The kubelet comes back: renewing its Lease and posting Ready lifts
	// the taints.
	// The node lifecycle controller writes the same Node: retry on
	// conflict, as a kubelet does.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := cs.CoreV1().Nodes().Get(ctx, "nl-lost", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				node.Status.Conditions[i] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
			}
		}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for renewCtx.Err() == nil {
			_ = renewLease(renewCtx, cs, "nl-lost")
			time.Sleep(500 * time.Millisecond)
		}
	}()
	testwait.For(t, nodesTestTimeout, "taints of nl-lost lifted once it is back", func(ctx context.Context) (bool, error) {
		node, err := cs.CoreV1().Nodes().Get(ctx, "nl-lost", metav1.GetOptions{})
		return err == nil && len(node.Spec.Taints) == 0, err
	})
}

func testNodeIPAM(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	names := []string{"ipam-a", "ipam-b", "ipam-c"}
	for _, n := range names {
		makeNode(t, cs, n, nil)
	}
	cluster := netip.MustParsePrefix(clusterCIDR)
	seen := map[string]string{}
	for _, n := range names {
		var cidr string
		testwait.For(t, nodesTestTimeout, "pod CIDR of "+n, func(ctx context.Context) (bool, error) {
			node, err := cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			cidr = node.Spec.PodCIDR
			if cidr != "" && (len(node.Spec.PodCIDRs) != 1 || node.Spec.PodCIDRs[0] != cidr) {
				return false, fmt.Errorf("podCIDR %q but podCIDRs %v", cidr, node.Spec.PodCIDRs)
			}
			return cidr != "", nil
		})
		p, err := netip.ParsePrefix(cidr)
		if err != nil || p.Bits() != nodeMaskSize || !cluster.Contains(p.Addr()) {
			t.Errorf("node %s podCIDR %q: want a /%d inside %s", n, cidr, nodeMaskSize, clusterCIDR)
		}
		if other, dup := seen[cidr]; dup {
			t.Errorf("nodes %s and %s share pod CIDR %s", other, n, cidr)
		}
		seen[cidr] = n
	}
	_ = ctx
}
