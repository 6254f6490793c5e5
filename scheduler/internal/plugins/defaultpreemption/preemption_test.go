package defaultpreemption

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugins/noderesources"
	"trireme.dev/scheduler/internal/plugintest"
)

func prio(p *v1.Pod, v int32) *v1.Pod { return plugintest.WithPriority(p, v) }

func run(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, preemptor *v1.Pod, pdbs ...*policyv1.PodDisruptionBudget) (*fwk.PostFilterResult, *fwk.Status, []string) {
	t.Helper()
	var pl *Plugin
	reg := framework.Registry{noderesources.FitName: noderesources.NewFit, Name: func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := New(ctx, obj, h)
		pl, _ = p.(*Plugin)
		return p, err
	}}
	h := plugintest.New(t, reg, []string{noderesources.FitName, Name}, nil, nodes, pods)
	ctx := context.Background()
	for _, pdb := range pdbs {
		if _, err := h.Client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(pdbs) > 0 {
		// Let the PDB informer see them.
		lister := h.SharedInformerFactory().Policy().V1().PodDisruptionBudgets().Lister()
		for i := 0; i < 200; i++ {
			if l, _ := lister.List(labelsEverything()); len(l) == len(pdbs) {
				break
			}
			sleep()
		}
	}
	state := framework.NewCycleState()
	all, _ := h.Snapshot.NodeInfos().List()
	if _, st, _ := h.RunPreFilterPlugins(ctx, state, preemptor, all); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	m := framework.NewNodeToStatus()
	for _, ni := range all {
		if st := h.RunFilterPlugins(ctx, state, preemptor, ni); !st.IsSuccess() {
			m.Set(ni.Node().Name, st)
		}
	}
	res, st := h.RunPostFilterPlugins(ctx, state, preemptor, m)
	// The victims are deleted in the background.
	pl.Wait()
	list, _ := h.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	var left []string
	for _, p := range list.Items {
		left = append(left, p.Name)
	}
	sort.Strings(left)
	return res, st, left
}

func TestPreemption(t *testing.T) {
	never := v1.PreemptNever
	neverPod := prio(plugintest.Pod("p", "1", ""), 100)
	neverPod.Spec.PreemptionPolicy = &never
	tests := []struct {
		name      string
		nodes     []*v1.Node
		pods      []*v1.Pod
		preemptor *v1.Pod
		wantNode  string
		wantLeft  string
		wantMsg   string
	}{
		{
			name:      "lowest priority victim on the only node",
			nodes:     []*v1.Node{plugintest.Node("n1", "2")},
			pods:      []*v1.Pod{prio(plugintest.Pod("low", "1", "n1"), 1), prio(plugintest.Pod("mid", "1", "n1"), 5)},
			preemptor: prio(plugintest.Pod("p", "1", ""), 100),
			wantNode:  "n1",
			wantLeft:  "mid",
		},
		{
			name:      "node whose victims have the lowest priority",
			nodes:     []*v1.Node{plugintest.Node("n1", "1"), plugintest.Node("n2", "1")},
			pods:      []*v1.Pod{prio(plugintest.Pod("v5", "1", "n1"), 5), prio(plugintest.Pod("v1", "1", "n2"), 1)},
			preemptor: prio(plugintest.Pod("p", "1", ""), 100),
			wantNode:  "n2",
			wantLeft:  "v5",
		},
		{
			name:      "fewest victims among equal priorities",
			nodes:     []*v1.Node{plugintest.Node("n1", "2"), plugintest.Node("n2", "2")},
			pods:      []*v1.Pod{prio(plugintest.Pod("a", "1", "n1"), 1), prio(plugintest.Pod("b", "1", "n1"), 1), prio(plugintest.Pod("c", "2", "n2"), 1)},
			preemptor: prio(plugintest.Pod("p", "2", ""), 100),
			wantNode:  "n2",
			wantLeft:  "a,b",
		},
		{
			name:      "no lower-priority pods",
			nodes:     []*v1.Node{plugintest.Node("n1", "1")},
			pods:      []*v1.Pod{prio(plugintest.Pod("high", "1", "n1"), 1000)},
			preemptor: prio(plugintest.Pod("p", "1", ""), 100),
			wantLeft:  "high",
			wantMsg:   "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
		{
			name:      "preemptionPolicy Never",
			nodes:     []*v1.Node{plugintest.Node("n1", "1")},
			pods:      []*v1.Pod{prio(plugintest.Pod("low", "1", "n1"), 1)},
			preemptor: neverPod,
			wantLeft:  "low",
			wantMsg:   "not eligible due to preemptionPolicy=Never.",
		},
		{
			name:      "node too small even when empty",
			nodes:     []*v1.Node{plugintest.Node("n1", "1")},
			pods:      []*v1.Pod{prio(plugintest.Pod("low", "1", "n1"), 1)},
			preemptor: prio(plugintest.Pod("p", "2", ""), 100),
			wantLeft:  "low",
			wantMsg:   "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, st, left := run(t, tt.nodes, tt.pods, tt.preemptor)
			if tt.wantMsg != "" {
				if st.IsSuccess() || st.Message() != tt.wantMsg {
					t.Errorf("status %v, want %q", st, tt.wantMsg)
				}
			} else if !st.IsSuccess() || res == nil || res.NominatedNodeName != tt.wantNode {
				t.Errorf("result %+v status %v, want nomination of %s", res, st, tt.wantNode)
			}
			if got := strings.Join(left, ","); got != tt.wantLeft {
				t.Errorf("pods left %q, want %q", got, tt.wantLeft)
			}
		})
	}
}

func TestPDBSteersVictimChoice(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("n1", "1"), plugintest.Node("n2", "1")}
	pods := []*v1.Pod{
		prio(plugintest.Pod("guarded", "1", "n1", "app", "guarded"), 1),
		prio(plugintest.Pod("free", "1", "n2", "app", "free"), 5),
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guard", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &intstr.IntOrString{IntVal: 1}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
	}
	res, st, left := run(t, nodes, pods, prio(plugintest.Pod("p", "1", ""), 100), pdb)
	if !st.IsSuccess() || res.NominatedNodeName != "n2" {
		t.Fatalf("result %+v %v: want n2, whose victim violates no PDB though its priority is higher", res, st)
	}
	if strings.Join(left, ",") != "guarded" {
		t.Errorf("pods left %v", left)
	}
}

func labelsEverything() labels.Selector { return labels.Everything() }

func sleep() { time.Sleep(10 * time.Millisecond) }

func TestPreemptionInProgressNotRepeated(t *testing.T) {
	p := &Plugin{}
	pod := prio(plugintest.Pod("p", "1", ""), 100)
	if ok, _ := p.eligible(pod, framework.NewNodeToStatus()); !ok {
		t.Fatalf("pod with no preemption running: not eligible")
	}
	p.running.Store(pod.UID, struct{}{})
	if ok, msg := p.eligible(pod, framework.NewNodeToStatus()); ok || msg != "not eligible due to a preemption in progress for the pod." {
		t.Errorf("pod whose victims are still being deleted: eligible %v, %q", ok, msg)
	}
}
