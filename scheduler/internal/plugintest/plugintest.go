// Package plugintest builds what plugin table tests need: nodes and pods
// with few words, a snapshot of them, and a framework running a chosen set
// of plugins over it.
package plugintest

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"

	"trireme.dev/api/config/kubescheduler"
	"trireme.dev/scheduler/internal/cache"
	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/queue"
)

// Node returns a node with cpu (e.g. "4"), 16Gi of memory, 110 pods and
// labels given as key, value pairs.
func Node(name, cpu string, kv ...string) *v1.Node {
	labels := map[string]string{v1.LabelHostname: name}
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	alloc := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(cpu),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc}}
}

// Pod returns a pod in namespace "default" requesting cpu (empty: no
// requests), on node (empty: pending), with labels as key, value pairs.
func Pod(name, cpu, node string, kv ...string) *v1.Pod {
	labels := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	c := v1.Container{Name: "c", Image: "pause"}
	if cpu != "" {
		c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: labels},
		Spec:       v1.PodSpec{NodeName: node, Containers: []v1.Container{c}},
	}
}

// WithPriority sets the pod's priority.
func WithPriority(p *v1.Pod, prio int32) *v1.Pod {
	p.Spec.Priority = ptr.To(prio)
	return p
}

// Handle is a framework over a snapshot of nodes and pods, running the
// plugins of registry with their default args (overridden by args).
type Handle struct {
	*framework.Framework
	Snapshot *cache.Snapshot
	Client   *fake.Clientset
}

// New builds a Handle. Plugins named in enabled run at every extension
// point they implement, with PrioritySort and DefaultBinder-like defaults
// supplied when registry has them.
func New(t testing.TB, registry framework.Registry, enabled []string, args map[string]runtime.Object, nodes []*v1.Node, pods []*v1.Pod) *Handle {
	t.Helper()
	return NewWithObjects(t, registry, enabled, args, nodes, pods, nil)
}

// NewWithObjects is New with further API objects (claims, volumes,
// storage classes, CSINodes) served to the plugins' informers.
func NewWithObjects(t testing.TB, registry framework.Registry, enabled []string, args map[string]runtime.Object, nodes []*v1.Node, pods []*v1.Pod, extra []runtime.Object) *Handle {
	t.Helper()
	snap := cache.NewSnapshot(pods, nodes)
	objs := append([]runtime.Object(nil), extra...)
	for _, p := range pods {
		objs = append(objs, p)
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	prof := &configv1.KubeSchedulerProfile{SchedulerName: ptr.To("test"), Plugins: &configv1.Plugins{}}
	for _, n := range enabled {
		prof.Plugins.MultiPoint.Enabled = append(prof.Plugins.MultiPoint.Enabled, configv1.Plugin{Name: n})
	}
	for _, n := range enabled {
		var a runtime.Object
		if args != nil {
			a = args[n]
		}
		if a == nil {
			// Default args as a configuration file would get them.
			d := kubescheduler.Default()
			for _, pc := range d.Profiles[0].PluginConfig {
				if pc.Name == n {
					a = pc.Args.Object
				}
			}
		}
		if a != nil {
			prof.PluginConfig = append(prof.PluginConfig, configv1.PluginConfig{Name: n, Args: runtime.RawExtension{Object: a}})
		}
	}
	reg := framework.Registry{}
	for k, v := range registry {
		reg[k] = v
	}
	reg["TestQueueSort"] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return testSort{}, nil }
	reg["TestBinder"] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return testBinder{}, nil }
	prof.Plugins.QueueSort.Enabled = []configv1.Plugin{{Name: "TestQueueSort"}}
	prof.Plugins.Bind.Enabled = []configv1.Plugin{{Name: "TestBinder"}}
	f, err := framework.New(context.Background(), reg, prof, framework.Options{
		ClientSet:       client,
		InformerFactory: factory,
		Snapshot:        snap,
		Nominator:       queue.NewNominator(),
		Parallelism:     4,
	})
	if err != nil {
		t.Fatalf("build framework: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return &Handle{Framework: f, Snapshot: snap, Client: client}
}

type testSort struct{}

func (testSort) Name() string                                                        { return "TestQueueSort" }
func (testSort) Less(a, b fwk.QueuedEntityInfo) bool                                 { return a.GetPriority() > b.GetPriority() }
func (testBinder) Name() string                                                      { return "TestBinder" }
func (testBinder) Bind(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status { return nil }

type testBinder struct{}

// Filter runs PreFilter and then Filter on every node, returning each
// node's status (nil for success) and the PreFilter status.
func (h *Handle) Filter(t testing.TB, pod *v1.Pod) (map[string]*fwk.Status, *fwk.Status) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	all, _ := h.Snapshot.NodeInfos().List()
	res, st, _ := h.RunPreFilterPlugins(ctx, state, pod, all)
	if !st.IsSuccess() {
		return nil, st
	}
	out := map[string]*fwk.Status{}
	for _, ni := range all {
		if !res.AllNodes() && !res.NodeNames.Has(ni.Node().Name) {
			out[ni.Node().Name] = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "excluded by PreFilter")
			continue
		}
		out[ni.Node().Name] = h.RunFilterPlugins(ctx, state, pod, ni)
	}
	return out, nil
}

// Score runs PreScore and Score over every node, returning the total
// (weighted, normalized) score per node.
func (h *Handle) Score(t testing.TB, pod *v1.Pod) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	all, _ := h.Snapshot.NodeInfos().List()
	if _, st, _ := h.RunPreFilterPlugins(ctx, state, pod, all); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	if st := h.RunPreScorePlugins(ctx, state, pod, all); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	scores, st := h.RunScorePlugins(ctx, state, pod, all)
	if !st.IsSuccess() {
		t.Fatalf("Score: %v", st)
	}
	out := map[string]int64{}
	for _, s := range scores {
		out[s.Name] = s.TotalScore
	}
	return out
}

// BenchmarkPreFilter measures PreFilter for pod with the plugins of
// registry named in enabled, over 500 nodes in ten zones (label "zone")
// holding ten pods labelled app=web each. Every iteration is a fresh
// cycle over the unchanged snapshot.
func BenchmarkPreFilter(b *testing.B, registry framework.Registry, enabled []string, pod *v1.Pod) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 500 {
		name := fmt.Sprintf("node-%04d", i)
		nodes = append(nodes, Node(name, "32", "zone", fmt.Sprintf("zone-%d", i%10)))
		for j := range 10 {
			pods = append(pods, Pod(fmt.Sprintf("p-%d-%d", i, j), "100m", name, "app", "web"))
		}
	}
	h := New(b, registry, enabled, nil, nodes, pods)
	ctx := context.Background()
	all, _ := h.Snapshot.NodeInfos().List()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, st, _ := h.RunPreFilterPlugins(ctx, framework.NewCycleState(), pod, all); !st.IsSuccess() {
			b.Fatalf("PreFilter: %v", st)
		}
	}
}

// Live is a scheduler cache and the snapshot it updates, for tests that
// follow what plugins keep between cycles while nodes and pods change.
type Live struct {
	*cache.Cache
	snap cache.Snapshot
}

// NewLive returns a Live holding nodes.
func NewLive(nodes ...*v1.Node) *Live {
	l := &Live{Cache: cache.New()}
	for _, n := range nodes {
		l.AddNode(n)
	}
	return l
}

// List brings the snapshot up to date, as a new cycle does, and returns
// its nodes.
func (l *Live) List() []fwk.NodeInfo {
	l.UpdateSnapshot(&l.snap)
	all, _ := l.snap.NodeInfos().List()
	return all
}

// NodeChange is a node event a queueing hint is asked about.
type NodeChange struct {
	Name string
	// Old is the node before the event, nil when it was added.
	Old, New *v1.Node
	Want     fwk.QueueingHint
}

// CheckNodeHints asks hint about pod for each change, as the queue does
// (an added node's old object is a nil interface, not a nil *v1.Node),
// and reports the wrong answers, a subtest each.
func CheckNodeHints(t *testing.T, hint fwk.QueueingHintFn, pod *v1.Pod, changes []NodeChange) {
	t.Helper()
	for _, c := range changes {
		t.Run(c.Name, func(t *testing.T) {
			var old any
			if c.Old != nil {
				old = c.Old
			}
			got, err := hint(klog.Background(), pod, old, c.New)
			if err != nil || got != c.Want {
				t.Errorf("hint = %v, %v; want %v", got, err, c.Want)
			}
		})
	}
}
