// Package defaultpreemption is the DefaultPreemption plugin (PostFilter):
// when no node fits a pod, it looks for a node where deleting
// lower-priority pods would make room, choosing the victims that violate
// the fewest PodDisruptionBudgets and have the lowest priorities, deletes
// them and nominates the node for the pod.
package defaultpreemption

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/metrics"
)

// Name is the plugin's name in the configuration.
const Name = "DefaultPreemption"

// Upstream's reasons.
const (
	reasonNoVictims  = "No preemption victims found for incoming pod"
	reasonNotHelpful = "Preemption is not helpful for scheduling"
)

// Plugin implements fwk.PostFilterPlugin.
type Plugin struct {
	h         fwk.Handle
	minPct    int32
	minAbs    int32
	pdbLister policylisters.PodDisruptionBudgetLister
	// running holds the preemptors whose victims' API calls are still in
	// flight (types.UID → struct{}): as upstream's asynchronous
	// preemption, the scheduling cycle does not wait for them, and a
	// preemptor retried meanwhile does not preempt a second time.
	running sync.Map
	// calls counts those API calls in flight, so tests can wait for them.
	calls sync.WaitGroup
}

// New is the plugin's factory.
func New(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	p := &Plugin{h: h, minPct: 10, minAbs: 100}
	if args, ok := obj.(*configv1.DefaultPreemptionArgs); ok && args != nil {
		if args.MinCandidateNodesPercentage != nil {
			p.minPct = *args.MinCandidateNodesPercentage
		}
		if args.MinCandidateNodesAbsolute != nil {
			p.minAbs = *args.MinCandidateNodesAbsolute
		}
	}
	if f := h.SharedInformerFactory(); f != nil {
		p.pdbLister = f.Policy().V1().PodDisruptionBudgets().Lister()
	}
	return p, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

type candidate struct {
	node          string
	victims       []*v1.Pod
	pdbViolations int
}

// PostFilter implements fwk.PostFilterPlugin.
func (p *Plugin) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if ok, msg := p.eligible(pod, m); !ok {
		return nil, fwk.NewStatus(fwk.Unschedulable, msg)
	}
	all, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	statuses := framework.NewNodeToStatus()
	var potential []fwk.NodeInfo
	for _, ni := range all {
		if m.Get(ni.Node().Name).Code() == fwk.UnschedulableAndUnresolvable {
			statuses.Set(ni.Node().Name, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reasonNotHelpful))
			continue
		}
		potential = append(potential, ni)
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if p.pdbLister != nil {
		if pdbs, err = p.pdbLister.List(labels.Everything()); err != nil {
			return nil, fwk.AsStatus(err)
		}
	}
	candidates, failed := p.dryRun(ctx, state, pod, potential, pdbs)
	for name, st := range failed {
		statuses.Set(name, st)
	}
	if len(candidates) == 0 {
		fe := &framework.FitError{NumAllNodes: len(all), Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
		return nil, fwk.NewStatus(fwk.Unschedulable, "preemption: "+fe.Error())
	}
	best := pick(candidates)
	if st := p.prepare(ctx, best, pod); !st.IsSuccess() {
		return nil, st
	}
	return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatedNodeName: best.node, NominatingMode: fwk.ModeOverride}}, fwk.NewStatus(fwk.Success)
}

// eligible refuses pods that may not preempt, and pods already nominated
// to a node where earlier victims are still terminating.
func (p *Plugin) eligible(pod *v1.Pod, m fwk.NodeToStatusReader) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	if _, ok := p.running.Load(pod.UID); ok {
		return false, "not eligible due to a preemption in progress for the pod."
	}
	nnn := pod.Status.NominatedNodeName
	if nnn == "" || m.Get(nnn).Code() == fwk.UnschedulableAndUnresolvable {
		return true, ""
	}
	ni, err := p.h.SnapshotSharedLister().NodeInfos().Get(nnn)
	if err != nil {
		return true, ""
	}
	prio := priority(pod)
	for _, pi := range ni.GetPods() {
		if pi.GetPod().DeletionTimestamp != nil && priority(pi.GetPod()) < prio {
			return false, "not eligible due to a terminating pod on the nominated node."
		}
	}
	return true, ""
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// dryRun evaluates the potential nodes in parallel, from a random offset,
// until enough candidates are found.
func (p *Plugin) dryRun(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]candidate, map[string]*fwk.Status) {
	if len(nodes) == 0 {
		return nil, nil
	}
	want := int(max(int32(len(nodes))*p.minPct/100, p.minAbs))
	want = min(max(want, 1), len(nodes))
	offset := rand.IntN(len(nodes))
	var mu sync.Mutex
	var nonViolating, violating []candidate
	failed := map[string]*fwk.Status{}
	var found atomic.Int32
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.h.Parallelizer().Until(ctx, len(nodes), func(i int) {
		ni := nodes[(offset+i)%len(nodes)].Snapshot()
		victims, violations, st := p.selectVictims(ctx, state.Clone(), pod, ni, pdbs)
		mu.Lock()
		defer mu.Unlock()
		if !st.IsSuccess() {
			failed[ni.Node().Name] = st
			return
		}
		c := candidate{node: ni.Node().Name, victims: victims, pdbViolations: violations}
		if violations == 0 {
			nonViolating = append(nonViolating, c)
			if int(found.Add(1)) >= want {
				cancel()
			}
		} else {
			violating = append(violating, c)
		}
	}, Name)
	return append(nonViolating, violating...), failed
}

// selectVictims finds the fewest, least important pods on ni whose
// removal lets pod fit: all lower-priority pods are removed, then each is
// added back, most important first, if the pod still fits without it.
func (p *Plugin) selectVictims(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	log := klog.FromContext(ctx)
	prio := priority(pod)
	var lower []fwk.PodInfo
	for _, pi := range ni.GetPods() {
		if priority(pi.GetPod()) < prio {
			lower = append(lower, pi)
		}
	}
	if len(lower) == 0 {
		return nil, 0, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reasonNoVictims)
	}
	remove := func(pi fwk.PodInfo) *fwk.Status {
		if err := ni.RemovePod(log, pi.GetPod()); err != nil {
			return fwk.AsStatus(err)
		}
		return p.h.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, ni)
	}
	add := func(pi fwk.PodInfo) *fwk.Status {
		ni.AddPodInfo(pi)
		return p.h.RunPreFilterExtensionAddPod(ctx, state, pod, pi, ni)
	}
	for _, pi := range lower {
		if st := remove(pi); !st.IsSuccess() {
			return nil, 0, st
		}
	}
	if st := p.h.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); !st.IsSuccess() {
		return nil, 0, fwk.NewStatus(fwk.Unschedulable, reasonNoVictims)
	}
	sort.SliceStable(lower, func(i, j int) bool { return moreImportant(lower[i].GetPod(), lower[j].GetPod()) })
	violating, nonViolating := splitByPDB(lower, pdbs)
	var victims []*v1.Pod
	reprieve := func(pi fwk.PodInfo) (bool, *fwk.Status) {
		if st := add(pi); !st.IsSuccess() {
			return false, st
		}
		if p.h.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni).IsSuccess() {
			return true, nil
		}
		if st := remove(pi); !st.IsSuccess() {
			return false, st
		}
		victims = append(victims, pi.GetPod())
		return false, nil
	}
	violations := 0
	for _, pi := range violating {
		fits, st := reprieve(pi)
		if !st.IsSuccess() {
			return nil, 0, st
		}
		if !fits {
			violations++
		}
	}
	for _, pi := range nonViolating {
		if _, st := reprieve(pi); !st.IsSuccess() {
			return nil, 0, st
		}
	}
	return victims, violations, nil
}

// moreImportant orders by priority, then by earlier start.
func moreImportant(a, b *v1.Pod) bool {
	pa, pb := priority(a), priority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a).Before(startTime(b))
}

func startTime(p *v1.Pod) *metav1.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime
	}
	t := p.CreationTimestamp
	return &t
}

// splitByPDB separates the pods whose eviction a PodDisruptionBudget
// forbids from the others, spending each budget's allowed disruptions in
// order.
func splitByPDB(pods []fwk.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []fwk.PodInfo) {
	allowed := make([]int32, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
	}
	for _, pi := range pods {
		pod := pi.GetPod()
		violates := false
		for i, pdb := range pdbs {
			if pdb.Namespace != pod.Namespace {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
				continue
			}
			if _, disrupted := pdb.Status.DisruptedPods[pod.Name]; disrupted {
				continue
			}
			allowed[i]--
			if allowed[i] < 0 {
				violates = true
			}
		}
		if violates {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// pick chooses among candidates as upstream does: fewest PDB violations,
// then the lowest highest-priority victim, the lowest priority sum, the
// fewest victims, the latest start among the most important victims.
func pick(cs []candidate) candidate {
	best := cs[0]
	for _, c := range cs[1:] {
		if better(c, best) {
			best = c
		}
	}
	return best
}

func better(a, b candidate) bool {
	if a.pdbViolations != b.pdbViolations {
		return a.pdbViolations < b.pdbViolations
	}
	ha, hb := highest(a.victims), highest(b.victims)
	if ha != hb {
		return ha < hb
	}
	sa, sb := sum(a.victims), sum(b.victims)
	if sa != sb {
		return sa < sb
	}
	if len(a.victims) != len(b.victims) {
		return len(a.victims) < len(b.victims)
	}
	ea, eb := earliestOfHighest(a.victims), earliestOfHighest(b.victims)
	if ea != nil && eb != nil && !ea.Equal(eb) {
		return eb.Before(ea)
	}
	return false
}

func highest(victims []*v1.Pod) int32 {
	h := int32(math.MinInt32)
	for _, v := range victims {
		h = max(h, priority(v))
	}
	return h
}

// sum offsets each priority by MaxInt32+1 so that negative priorities add
// up correctly, as upstream does.
func sum(victims []*v1.Pod) int64 {
	var s int64
	for _, v := range victims {
		s += int64(priority(v)) + int64(math.MaxInt32) + 1
	}
	return s
}

func earliestOfHighest(victims []*v1.Pod) *metav1.Time {
	h := highest(victims)
	var e *metav1.Time
	for _, v := range victims {
		if priority(v) == h && (e == nil || startTime(v).Before(e)) {
			e = startTime(v)
		}
	}
	return e
}

// prepare deletes the victims (marking them DisruptionTarget first, as
// upstream does) and clears the nominations of lower-priority pods to the
// node, which would otherwise take the room made. Waiting victims are
// rejected and nominations dropped at once; the API calls run in the
// background, so that the scheduling cycle does not wait for them: the
// preemptor, nominated to the node, is retried when its victims are gone.
// A failed call lets the preemptor try again at once.
func (p *Plugin) prepare(ctx context.Context, c candidate, pod *v1.Pod) *fwk.Status {
	var victims []*v1.Pod
	for _, v := range c.victims {
		if wp := p.h.GetWaitingPod(v.UID); wp != nil {
			wp.Reject(Name, "preempted")
			continue
		}
		victims = append(victims, v)
	}
	prio := priority(pod)
	var cleared []*v1.Pod
	for _, np := range p.h.NominatedPodsForNode(c.node) {
		n := np.GetPod()
		if priority(n) >= prio || n.UID == pod.UID {
			continue
		}
		cleared = append(cleared, n)
		p.h.DeleteNominatedPodIfExists(n)
	}
	if len(victims) == 0 && len(cleared) == 0 {
		return nil
	}
	p.running.Store(pod.UID, struct{}{})
	p.calls.Add(1)
	go func() {
		defer p.calls.Done()
		// The calls outlive the cycle that started them.
		ctx := context.WithoutCancel(ctx)
		err := p.evict(ctx, c.node, pod, victims, cleared)
		p.running.Delete(pod.UID)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Preemption failed", "preemptor", klog.KObj(pod), "node", c.node)
			p.h.Activate(klog.FromContext(ctx), map[string]*v1.Pod{pod.Name: pod})
		}
	}()
	return nil
}

// evict makes prepare's API calls.
func (p *Plugin) evict(ctx context.Context, node string, pod *v1.Pod, victims, cleared []*v1.Pod) error {
	log := klog.FromContext(ctx)
	cs := p.h.ClientSet()
	var errs []string
	for _, v := range victims {
		patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"conditions":[{"type":%q,"status":"True","reason":"PreemptionByScheduler","message":%q,"lastTransitionTime":%q}]}}`,
			v.UID, v1.DisruptionTarget, fmt.Sprintf("%s: preempting to accommodate a higher priority pod", p.h.ProfileName()), metav1.Now().UTC().Format("2006-01-02T15:04:05Z"))
		if _, err := cs.CoreV1().Pods(v.Namespace).Patch(ctx, v.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) {
			log.V(2).Info("Could not mark victim DisruptionTarget", "pod", klog.KObj(v), "err", err)
		}
		uid := v.UID
		if err := cs.CoreV1().Pods(v.Namespace).Delete(ctx, v.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Sprintf("delete %s/%s: %v", v.Namespace, v.Name, err))
			continue
		}
		metrics.PreemptionVictims.Inc()
		if r := p.h.EventRecorder(); r != nil {
			r.Eventf(v, pod, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by pod %v on node %v", pod.UID, node)
		}
		log.V(2).Info("Preempted pod", "victim", klog.KObj(v), "preemptor", klog.KObj(pod), "node", node)
	}
	for _, n := range cleared {
		patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"nominatedNodeName":null}}`, n.UID)
		if _, err := cs.CoreV1().Pods(n.Namespace).Patch(ctx, n.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "Clear lower-priority nomination", "pod", klog.KObj(n))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("preemption: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Wait waits for the API calls of preemptions already made, for tests.
func (p *Plugin) Wait() { p.calls.Wait() }
