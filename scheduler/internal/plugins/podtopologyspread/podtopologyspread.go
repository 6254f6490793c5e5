// Package podtopologyspread is the PodTopologySpread plugin: pods with
// topologySpreadConstraints spread over topology domains (zones, nodes)
// within maxSkew — a hard filter for DoNotSchedule, a score for
// ScheduleAnyway — with minDomains, nodeAffinityPolicy, nodeTaintsPolicy,
// matchLabelKeys and cluster-level default constraints.
package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/api/config/kubescheduler"
)

// Name is the plugin's name in the configuration.
const Name = "PodTopologySpread"

// Upstream's reasons.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

const (
	preFilterKey fwk.StateKey = "PreFilter" + Name
	preScoreKey  fwk.StateKey = "PreScore" + Name
)

// Plugin implements PreFilter (with extensions), Filter, PreScore and
// Score.
type Plugin struct {
	h        fwk.Handle
	defaults []v1.TopologySpreadConstraint
	services corelisters.ServiceLister
	rcs      corelisters.ReplicationControllerLister
	rss      appslisters.ReplicaSetLister
	sss      appslisters.StatefulSetLister
	// cache keeps domain counts between cycles.
	cache countCache
}

// New is the plugin's factory.
func New(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	p := &Plugin{h: h, defaults: kubescheduler.SystemDefaultSpreadConstraints}
	if args, ok := obj.(*configv1.PodTopologySpreadArgs); ok && args != nil && args.DefaultingType == configv1.ListDefaulting {
		p.defaults = args.DefaultConstraints
	}
	if f := h.SharedInformerFactory(); f != nil && len(p.defaults) > 0 {
		p.services = f.Core().V1().Services().Lister()
		p.rcs = f.Core().V1().ReplicationControllers().Lister()
		p.rss = f.Apps().V1().ReplicaSets().Lister()
		p.sss = f.Apps().V1().StatefulSets().Lister()
	}
	return p, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// constraint is a parsed topologySpreadConstraint.
type constraint struct {
	maxSkew           int32
	key               string
	selector          labels.Selector
	minDomains        int32
	honorNodeAffinity bool
	honorNodeTaints   bool
	whenUnsatisfiable v1.UnsatisfiableConstraintAction
}

// constraints returns pod's constraints of action, or the default ones
// (with a selector built from the pod's owners and services) when it has
// none.
func (p *Plugin) constraints(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]constraint, error) {
	src := pod.Spec.TopologySpreadConstraints
	var defaultSel labels.Selector
	if len(src) == 0 {
		src = p.defaults
		if len(src) == 0 {
			return nil, nil
		}
		defaultSel = p.defaultSelector(pod)
		if defaultSel.Empty() {
			return nil, nil
		}
	}
	var out []constraint
	for _, c := range src {
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel := defaultSel
		if sel == nil {
			var err error
			if sel, err = metav1.LabelSelectorAsSelector(c.LabelSelector); err != nil {
				return nil, err
			}
			if len(c.MatchLabelKeys) > 0 {
				for _, k := range c.MatchLabelKeys {
					if v, ok := pod.Labels[k]; ok {
						r, err := labels.NewRequirement(k, "in", []string{v})
						if err != nil {
							return nil, err
						}
						sel = sel.Add(*r)
					}
				}
			}
		}
		minDomains := int32(1)
		if c.MinDomains != nil {
			minDomains = *c.MinDomains
		}
		out = append(out, constraint{
			maxSkew:           c.MaxSkew,
			key:               c.TopologyKey,
			selector:          sel,
			minDomains:        minDomains,
			honorNodeAffinity: c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor,
			honorNodeTaints:   c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor,
			whenUnsatisfiable: c.WhenUnsatisfiable,
		})
	}
	return out, nil
}

// defaultSelector selects the pods sharing pod's services and owning
// controllers, as upstream's DefaultSelector does.
func (p *Plugin) defaultSelector(pod *v1.Pod) labels.Selector {
	set := labels.Set{}
	if p.services != nil {
		if svcs, err := p.services.Services(pod.Namespace).List(labels.Everything()); err == nil {
			for _, s := range svcs {
				if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
					for k, v := range s.Spec.Selector {
						set[k] = v
					}
				}
			}
		}
	}
	sel := labels.SelectorFromSet(set)
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return sel
	}
	add := func(ls *metav1.LabelSelector) {
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			return
		}
		if reqs, ok := s.Requirements(); ok {
			sel = sel.Add(reqs...)
		}
	}
	switch owner.Kind {
	case "ReplicationController":
		if p.rcs != nil {
			if rc, err := p.rcs.ReplicationControllers(pod.Namespace).Get(owner.Name); err == nil && len(rc.Spec.Selector) > 0 {
				add(metav1.SetAsLabelSelector(rc.Spec.Selector))
			}
		}
	case "ReplicaSet":
		if p.rss != nil {
			if rs, err := p.rss.ReplicaSets(pod.Namespace).Get(owner.Name); err == nil {
				add(rs.Spec.Selector)
			}
		}
	case "StatefulSet":
		if p.sss != nil {
			if ss, err := p.sss.StatefulSets(pod.Namespace).Get(owner.Name); err == nil {
				add(ss.Spec.Selector)
			}
		}
	}
	return sel
}

// preFilterState holds, per constraint, the matching pods per topology
// value: base (shared with the plugin's countCache, never written here)
// plus delta (what AddPod and RemovePod changed in this cycle), and the
// smallest count, which Filter compares against.
type preFilterState struct {
	constraints []constraint
	base        []map[string]int
	delta       []map[string]int
	mins        []int
	self        []int // 1 where the incoming pod matches the constraint's selector
	required    nodeaffinity.RequiredNodeAffinity
	tolerations []v1.Toleration
	namespace   string
}

func (s *preFilterState) Clone() fwk.StateData {
	c := *s
	c.mins = append([]int(nil), s.mins...)
	if s.delta != nil {
		c.delta = make([]map[string]int, len(s.delta))
		for i, m := range s.delta {
			c.delta[i] = make(map[string]int, len(m))
			for k, v := range m {
				c.delta[i][k] = v
			}
		}
	}
	return &c
}

// count returns constraint i's matching pods in domain v.
func (s *preFilterState) count(i int, v string) int {
	n := s.base[i][v]
	if s.delta != nil {
		n += s.delta[i][v]
	}
	return n
}

// computeMin sets mins[i] to the smallest count over constraint i's
// domains (math.MaxInt when there are none).
func (s *preFilterState) computeMin(i int) {
	m := math.MaxInt
	for v, n := range s.base[i] {
		if s.delta != nil {
			n += s.delta[i][v]
		}
		m = min(m, n)
	}
	s.mins[i] = m
}

// nodeQualifies reports whether node counts for constraint c: it has all
// keys and passes the policies.
func nodeQualifies(ctx context.Context, node *v1.Node, cs []constraint, c constraint, required nodeaffinity.RequiredNodeAffinity, tolerations []v1.Toleration) bool {
	for _, o := range cs {
		if _, ok := node.Labels[o.key]; !ok {
			return false
		}
	}
	if c.honorNodeAffinity {
		if ok, _ := required.Match(node); !ok {
			return false
		}
	}
	if c.honorNodeTaints {
		if _, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.FromContext(ctx), node.Spec.Taints, tolerations, func(t *v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}, true); untolerated {
			return false
		}
	}
	return true
}

func countMatching(pods []fwk.PodInfo, ns string, sel labels.Selector) int {
	n := 0
	for _, pi := range pods {
		p := pi.GetPod()
		if p.Namespace == ns && p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

// PreFilter implements fwk.PreFilterPlugin: it counts matching pods per
// domain for each DoNotSchedule constraint.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	cs, err := p.constraints(pod, v1.DoNotSchedule)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("obtaining pod's hard topology spread constraints: %w", err))
	}
	if len(cs) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	s := &preFilterState{constraints: cs, mins: make([]int, len(cs)), required: nodeaffinity.GetRequiredNodeAffinity(pod), tolerations: pod.Spec.Tolerations, namespace: pod.Namespace}
	all, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if cacheable(pod, cs) {
		s.base = p.cache.counts(ctx, pod, cs, s.required, all)
	} else {
		s.base = make([]map[string]int, len(cs))
		for i := range cs {
			s.base[i] = map[string]int{}
		}
		for _, ni := range all {
			node := ni.Node()
			for i, c := range cs {
				if !nodeQualifies(ctx, node, cs, c, s.required, s.tolerations) {
					continue
				}
				s.base[i][node.Labels[c.key]] += countMatching(ni.GetPods(), pod.Namespace, c.selector)
			}
		}
	}
	s.self = make([]int, len(cs))
	for i, c := range cs {
		s.computeMin(i)
		if c.selector.Matches(labels.Set(pod.Labels)) {
			s.self[i] = 1
		}
	}
	state.Write(preFilterKey, s)
	return nil, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return p }

// AddPod implements fwk.PreFilterExtensions.
func (p *Plugin) AddPod(ctx context.Context, state fwk.CycleState, _ *v1.Pod, add fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	return p.update(ctx, state, add.GetPod(), ni, 1)
}

// RemovePod implements fwk.PreFilterExtensions.
func (p *Plugin) RemovePod(ctx context.Context, state fwk.CycleState, _ *v1.Pod, remove fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	return p.update(ctx, state, remove.GetPod(), ni, -1)
}

func (p *Plugin) update(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo, delta int) *fwk.Status {
	d, err := state.Read(preFilterKey)
	if err != nil {
		return nil
	}
	s := d.(*preFilterState)
	node := ni.Node()
	if pod.Namespace != s.namespace {
		return nil
	}
	for i, c := range s.constraints {
		if nodeQualifies(ctx, node, s.constraints, c, s.required, s.tolerations) && c.selector.Matches(labels.Set(pod.Labels)) {
			if s.delta == nil {
				s.delta = make([]map[string]int, len(s.constraints))
				for j := range s.delta {
					s.delta[j] = map[string]int{}
				}
			}
			s.delta[i][node.Labels[c.key]] += delta
			s.computeMin(i)
		}
	}
	return nil
}

// Filter implements fwk.FilterPlugin.
func (p *Plugin) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	d, err := state.Read(preFilterKey)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preFilterKey, err))
	}
	s := d.(*preFilterState)
	node := ni.Node()
	for i, c := range s.constraints {
		value, ok := node.Labels[c.key]
		if !ok {
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		minMatch := s.mins[i]
		if minMatch == math.MaxInt || int32(len(s.base[i])) < c.minDomains {
			minMatch = 0
		}
		if skew := s.count(i, value) + s.self[i] - minMatch; skew > int(c.maxSkew) {
			return fwk.NewStatus(fwk.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

type preScoreState struct {
	constraints []constraint
	counts      []map[string]int
	weights     []float64
	ignored     map[string]bool
}

func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore implements fwk.PreScorePlugin: it counts matching pods per
// domain for each ScheduleAnyway constraint.
func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, filtered []fwk.NodeInfo) *fwk.Status {
	cs, err := p.constraints(pod, v1.ScheduleAnyway)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("obtaining pod's soft topology spread constraints: %w", err))
	}
	if len(cs) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	s := &preScoreState{constraints: cs, counts: make([]map[string]int, len(cs)), weights: make([]float64, len(cs)), ignored: map[string]bool{}}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	domains := make([]map[string]bool, len(cs))
	for i := range cs {
		s.counts[i] = map[string]int{}
		domains[i] = map[string]bool{}
	}
	for _, ni := range filtered {
		node := ni.Node()
		for _, c := range cs {
			if _, ok := node.Labels[c.key]; !ok {
				s.ignored[node.Name] = true
			}
		}
		if s.ignored[node.Name] {
			continue
		}
		for i, c := range cs {
			domains[i][node.Labels[c.key]] = true
		}
	}
	all, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return fwk.AsStatus(err)
	}
	if cacheable(pod, cs) {
		// Domain totals over all qualifying nodes, kept between cycles.
		cached := p.cache.counts(ctx, pod, cs, required, all)
		for i := range cs {
			for v := range domains[i] {
				s.counts[i][v] = cached[i][v]
			}
		}
	} else {
		for _, ni := range all {
			node := ni.Node()
			for i, c := range cs {
				value, ok := node.Labels[c.key]
				if !ok || !domains[i][value] || !nodeQualifies(ctx, node, cs, c, required, pod.Spec.Tolerations) {
					continue
				}
				s.counts[i][value] += countMatching(ni.GetPods(), pod.Namespace, c.selector)
			}
		}
	}
	for i := range cs {
		s.weights[i] = math.Log(float64(len(domains[i]) + 2))
	}
	state.Write(preScoreKey, s)
	return nil
}

// Score implements fwk.ScorePlugin: the weighted count of matching pods
// in the node's domains (lower is better; NormalizeScore reverses it).
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	d, err := state.Read(preScoreKey)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreKey, err))
	}
	s := d.(*preScoreState)
	node := ni.Node()
	if s.ignored[node.Name] {
		return 0, nil
	}
	var score float64
	for i, c := range s.constraints {
		score += float64(s.counts[i][node.Labels[c.key]])*s.weights[i] + float64(c.maxSkew-1)
	}
	return int64(math.Round(score)), nil
}

// NormalizeScore implements fwk.ScoreExtensions: fewer matching pods
// score higher; nodes lacking a topology key score 0.
func (p *Plugin) NormalizeScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	d, err := state.Read(preScoreKey)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreKey, err))
	}
	s := d.(*preScoreState)
	var minScore, maxScore int64 = math.MaxInt64, math.MinInt64
	for _, sc := range scores {
		if s.ignored[sc.Name] {
			continue
		}
		minScore = min(minScore, sc.Score)
		maxScore = max(maxScore, sc.Score)
	}
	for i := range scores {
		if s.ignored[scores[i].Name] {
			scores[i].Score = 0
			continue
		}
		if maxScore == 0 {
			scores[i].Score = fwk.MaxScore
			continue
		}
		scores[i].Score = fwk.MaxScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
	return nil
}

// ScoreExtensions implements fwk.ScorePlugin.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// EventsToRegister implements fwk.EnqueueExtensions.
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Add | fwk.UpdatePodLabel | fwk.Delete}, QueueingHintFn: p.isSchedulableAfterPodChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.Delete | fwk.UpdateNodeLabel | fwk.UpdateNodeTaint}, QueueingHintFn: p.isSchedulableAfterNodeChange},
	}, nil
}
