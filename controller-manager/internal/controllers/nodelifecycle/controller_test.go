package nodelifecycle

import (
	"context"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func readyNode(name, zone string, heartbeat time.Time) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0)},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.NewTime(heartbeat), LastTransitionTime: metav1.NewTime(heartbeat),
		}}},
	}
	if zone != "" {
		n.Labels = map[string]string{corev1.LabelTopologyZone: zone}
	}
	return n
}

func lease(name string, renew time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: LeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renew}},
	}
}

func start(t *testing.T, clk *clock, objs ...runtime.Object) (*Controller, *fake.Clientset, informers.SharedInformerFactory, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(Options{
		Client: client, Recorder: record.NewFakeRecorder(100),
		Nodes: factory.Core().V1().Nodes(), Pods: factory.Core().V1().Pods(), Leases: factory.Coordination().V1().Leases(),
		MonitorPeriod: time.Second, MonitorGracePeriod: 40 * time.Second, StartupGracePeriod: time.Minute,
		EvictionRate: 1000, SecondaryEvictionRate: 0.01, LargeClusterSizeThreshold: 50, UnhealthyZoneThreshold: 0.55,
		Now: clk.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return c, client, factory, ctx
}

// settle waits for the informers to see the client's writes.
func settle() { time.Sleep(50 * time.Millisecond) }

func TestMonitor(t *testing.T) {
	tests := []struct {
		name string
		// renew says whether the node's lease is renewed and whether its
		// heartbeat moves before the grace period runs out.
		renewLease, heartbeat bool
		wantReady             corev1.ConditionStatus
		wantTaint             string
	}{
		{"silent node goes Unknown and unreachable", false, false, corev1.ConditionUnknown, corev1.TaintNodeUnreachable},
		{"renewed lease keeps node ready", true, false, corev1.ConditionTrue, ""},
		{"heartbeat alone keeps node ready", false, true, corev1.ConditionTrue, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{now: t0}
			// A second, healthy node in the zone keeps it out of full
			// disruption.
			c, client, _, ctx := start(t, clk,
				readyNode("n1", "z", t0), lease("n1", t0),
				readyNode("n2", "z", t0), lease("n2", t0))
			if err := c.monitor(ctx); err != nil {
				t.Fatal(err)
			}
			for _, step := range []time.Duration{30 * time.Second, 30 * time.Second} {
				clk.Add(step)
				renew := func(name string) {
					l, _ := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, name, metav1.GetOptions{})
					l.Spec.RenewTime = &metav1.MicroTime{Time: clk.Now()}
					if _, err := client.CoordinationV1().Leases(LeaseNamespace).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				renew("n2")
				if tt.renewLease {
					renew("n1")
				}
				if tt.heartbeat {
					n, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
					n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(clk.Now())
					if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				settle()
				if err := c.monitor(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// The eviction pass re-reads the node's condition from the
			// cache, as upstream's does.
			settle()
			c.taintQueued(ctx)
			settle()
			if err := c.syncNoScheduleTaints(ctx, "n1"); err != nil {
				t.Fatal(err)
			}
			n, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ready := condition(n.Status.Conditions, corev1.NodeReady)
			if ready.Status != tt.wantReady {
				t.Errorf("Ready = %s, want %s", ready.Status, tt.wantReady)
			}
			if tt.wantReady == corev1.ConditionUnknown && (ready.Reason != reasonUnknown || ready.Message != messageUnknown) {
				t.Errorf("Ready reason %q message %q", ready.Reason, ready.Message)
			}
			for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
				has := tt.wantTaint != "" && hasTaint(n, tt.wantTaint, effect)
				if (tt.wantTaint != "") != has {
					t.Errorf("taints %v, want %q %s", n.Spec.Taints, tt.wantTaint, effect)
				}
				if tt.wantTaint == "" && len(n.Spec.Taints) > 0 {
					t.Errorf("healthy node tainted: %v", n.Spec.Taints)
				}
			}
		})
	}
}

func TestFullDisruptionStopsTainting(t *testing.T) {
	clk := &clock{now: t0}
	c, client, _, ctx := start(t, clk, readyNode("only", "", t0), lease("only", t0))
	if err := c.monitor(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	if err := c.monitor(ctx); err != nil {
		t.Fatal(err)
	}
	c.taintQueued(ctx)
	n, _ := client.CoreV1().Nodes().Get(ctx, "only", metav1.GetOptions{})
	if hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute) {
		t.Errorf("the only node, not ready, was tainted NoExecute: with every node down the controller must not evict")
	}
	if ready := condition(n.Status.Conditions, corev1.NodeReady); ready.Status != corev1.ConditionUnknown {
		t.Errorf("Ready = %s, want Unknown", ready.Status)
	}
}

func TestMarkPodsNotReady(t *testing.T) {
	clk := &clock{now: t0}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
			Type: corev1.PodReady, Status: corev1.ConditionTrue,
		}}},
	}
	c, client, _, ctx := start(t, clk, readyNode("n1", "", t0), pod)
	if err := c.markPodsNotReady(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	got, _ := client.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	if got.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Errorf("pod Ready = %s, want False", got.Status.Conditions[0].Status)
	}
}

func TestMarkUnknown(t *testing.T) {
	now := metav1.NewTime(t0.Add(time.Hour))
	tests := []struct {
		name        string
		conds       []corev1.NodeCondition
		wantChanged bool
		wantReason  string
	}{
		{"never posted", nil, true, reasonNeverUpdated},
		{"ready goes unknown", []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}, true, reasonUnknown},
		{"already unknown stays", []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: reasonUnknown},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionUnknown},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionUnknown},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionUnknown},
		}, false, reasonUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := &corev1.Node{Status: corev1.NodeStatus{Conditions: tt.conds}}
			got, changed := markUnknown(node, now)
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			for _, ct := range lostConditions {
				c := condition(got.Status.Conditions, ct)
				if c == nil || c.Status != corev1.ConditionUnknown {
					t.Errorf("%s = %+v, want Unknown", ct, c)
				}
			}
			if r := condition(got.Status.Conditions, corev1.NodeReady).Reason; r != tt.wantReason {
				t.Errorf("reason %q, want %q", r, tt.wantReason)
			}
		})
	}
}

func TestZoneState(t *testing.T) {
	ready := &corev1.NodeCondition{Status: corev1.ConditionTrue}
	down := &corev1.NodeCondition{Status: corev1.ConditionUnknown}
	zs := newZones(zoneRates{normal: 0.1, secondary: 0.01, largeCluster: 2, unhealthy: 0.55})
	tests := []struct {
		name  string
		conds []*corev1.NodeCondition
		want  zoneState
	}{
		{"all ready", []*corev1.NodeCondition{ready, ready}, stateNormal},
		{"none ready", []*corev1.NodeCondition{down, nil}, stateFullDisruption},
		{"two of three down is not partial: fewer than three", []*corev1.NodeCondition{down, down, ready}, stateNormal},
		{"three of four down is partial", []*corev1.NodeCondition{down, down, down, ready}, statePartialDisruption},
		{"three of ten down is normal", []*corev1.NodeCondition{down, down, down, ready, ready, ready, ready, ready, ready, ready}, stateNormal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := zs.computeState(tt.conds); got != tt.want {
				t.Errorf("state = %s, want %s", got, tt.want)
			}
		})
	}
	rates := []struct {
		name  string
		state zoneState
		size  int
		want  float32
	}{
		{"normal zone evicts at the normal rate", stateNormal, 10, 0.1},
		{"partial disruption in a large zone slows down", statePartialDisruption, 10, 0.01},
		{"partial disruption in a small zone stops", statePartialDisruption, 2, 0},
		{"fully disrupted zone keeps the normal rate", stateFullDisruption, 10, 0.1},
	}
	for _, tt := range rates {
		t.Run(tt.name, func(t *testing.T) {
			if got := zs.rateFor(tt.state, tt.size); got != tt.want {
				t.Errorf("rate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNoScheduleKeys(t *testing.T) {
	tests := []struct {
		name  string
		node  corev1.Node
		wants []string
	}{
		{"ready", corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}, nil},
		{"not ready", corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}}, []string{corev1.TaintNodeNotReady}},
		{"unknown", corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}}, []string{corev1.TaintNodeUnreachable}},
		{"pressure and cordoned", corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue}, {Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue},
		}}}, []string{corev1.TaintNodeMemoryPressure, corev1.TaintNodeDiskPressure, corev1.TaintNodeUnschedulable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := noScheduleKeys(&tt.node)
			if len(got) != len(tt.wants) {
				t.Errorf("keys %v, want %v", got, tt.wants)
			}
			for _, k := range tt.wants {
				if !got[k] {
					t.Errorf("keys %v lack %s", got, k)
				}
			}
		})
	}
}
