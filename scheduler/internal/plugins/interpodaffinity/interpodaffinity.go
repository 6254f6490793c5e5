// Package interpodaffinity is the InterPodAffinity plugin: required pod
// affinity and anti-affinity (the incoming pod's, and existing pods'
// anti-affinity against it) filter nodes by topology domain; preferred
// terms (and existing pods' terms) score them. Namespaces, namespace
// selectors and matchLabelKeys are honoured.
package interpodaffinity

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// Name is the plugin's name in the configuration.
const Name = "InterPodAffinity"

// Upstream's reasons.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

const (
	preFilterKey fwk.StateKey = "PreFilter" + Name
	preScoreKey  fwk.StateKey = "PreScore" + Name
)

// Plugin implements PreFilter (with extensions), Filter, PreScore and
// Score.
type Plugin struct {
	h                  fwk.Handle
	hardWeight         int32
	ignoreExistingPref bool
	nsLister           corelisters.NamespaceLister
	// cache keeps PreFilter's domain counts between cycles.
	cache countCache
}

// New is the plugin's factory.
func New(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	p := &Plugin{h: h, hardWeight: 1}
	if args, ok := obj.(*configv1.InterPodAffinityArgs); ok && args != nil {
		if args.HardPodAffinityWeight != nil {
			p.hardWeight = *args.HardPodAffinityWeight
		}
		p.ignoreExistingPref = args.IgnorePreferredTermsOfExistingPods
	}
	if f := h.SharedInformerFactory(); f != nil {
		p.nsLister = f.Core().V1().Namespaces().Lister()
	}
	return p, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

type pair struct{ key, value string }

type counts map[pair]int64

func (c counts) add(terms []fwk.AffinityTerm, node *v1.Node, delta int64) {
	for _, t := range terms {
		if v, ok := node.Labels[t.TopologyKey]; ok {
			c[pair{t.TopologyKey, v}] += delta
			if c[pair{t.TopologyKey, v}] == 0 {
				delete(c, pair{t.TopologyKey, v})
			}
		}
	}
}

func (c counts) clone() counts {
	out := make(counts, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// preFilterState holds per-domain counts, each a base kept between
// cycles by the plugin's countCache plus this cycle's changes.
type preFilterState struct {
	existingAnti *layered // existing pods' anti-affinity terms matching the incoming pod
	affinity     *layered // pods matching all the incoming pod's affinity terms
	anti         *layered // pods matching the incoming pod's anti-affinity terms
	podInfo      *framework.PodInfo
	nsLabels     labels.Set
}

func (s *preFilterState) Clone() fwk.StateData {
	return &preFilterState{existingAnti: s.existingAnti.clone(), affinity: s.affinity.clone(), anti: s.anti.clone(), podInfo: s.podInfo, nsLabels: s.nsLabels}
}

// resolve turns the incoming pod's namespace selectors into namespace
// sets, so that matching existing pods needs no namespace lookups.
func (p *Plugin) resolve(terms []fwk.AffinityTerm) []fwk.AffinityTerm {
	out := make([]fwk.AffinityTerm, len(terms))
	for i, t := range terms {
		out[i] = t
		if t.NamespaceSelector == nil || t.NamespaceSelector.Empty() && t.Namespaces.Len() > 0 {
			if t.NamespaceSelector == nil {
				out[i].NamespaceSelector = labels.Nothing()
			}
			continue
		}
		ns := t.Namespaces.Clone()
		if ns == nil {
			ns = sets.New[string]()
		}
		if p.nsLister != nil {
			if list, err := p.nsLister.List(t.NamespaceSelector); err == nil {
				for _, n := range list {
					ns.Insert(n.Name)
				}
			}
		}
		out[i].Namespaces = ns
		out[i].NamespaceSelector = labels.Nothing()
	}
	return out
}

func (p *Plugin) nsLabels(ns string) labels.Set {
	if p.nsLister == nil {
		return labels.Set{}
	}
	n, err := p.nsLister.Get(ns)
	if err != nil {
		return labels.Set{}
	}
	return labels.Set(n.Labels)
}

func weighted(terms []fwk.WeightedAffinityTerm) []fwk.AffinityTerm {
	out := make([]fwk.AffinityTerm, len(terms))
	for i := range terms {
		out[i] = terms[i].AffinityTerm
	}
	return out
}

func matchesAll(terms []fwk.AffinityTerm, pod *v1.Pod, nsLabels labels.Set) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nsLabels) {
			return false
		}
	}
	return true
}

// PreFilter implements fwk.PreFilterPlugin.
func (p *Plugin) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	pi := framework.NewPodInfo(pod)
	if pi.ParseErr != nil {
		return nil, fwk.AsStatus(fmt.Errorf("parsing pod: %w", pi.ParseErr))
	}
	lister := p.h.SnapshotSharedLister().NodeInfos()
	withAnti, err := lister.HavePodsWithRequiredAntiAffinityList()
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0 && len(withAnti) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	pi.RequiredAffinityTerms = p.resolve(pi.RequiredAffinityTerms)
	pi.RequiredAntiAffinityTerms = p.resolve(pi.RequiredAntiAffinityTerms)
	nsLabels := p.nsLabels(pod.Namespace)
	s := &preFilterState{podInfo: pi, nsLabels: nsLabels, affinity: &layered{}, anti: &layered{}}
	// Existing pods' anti-affinity against the incoming pod depends only
	// on its namespace (and that namespace's labels) and its labels.
	existingKey := "E" + pod.Namespace + "\x00" + labels.Set(pod.Labels).String() + "\x00" + nsLabels.String()
	s.existingAnti = layeredOn(p.cache.get(existingKey, withAnti, func(ni fwk.NodeInfo) counts {
		c := counts{}
		for _, existing := range ni.GetPodsWithRequiredAntiAffinity() {
			for _, t := range existing.GetRequiredAntiAffinityTerms() {
				if t.Matches(pod, nsLabels) {
					c.add([]fwk.AffinityTerm{t}, ni.Node(), 1)
				}
			}
		}
		return c
	}))
	if len(pi.RequiredAffinityTerms) > 0 || len(pi.RequiredAntiAffinityTerms) > 0 {
		all, err := lister.List()
		if err != nil {
			return nil, fwk.AsStatus(err)
		}
		// Existing pods' namespace labels only matter through selectors,
		// which resolve turned into namespace sets: the counts depend on
		// the terms alone.
		if terms := pi.RequiredAffinityTerms; len(terms) > 0 {
			s.affinity = layeredOn(p.cache.get(termsKey("A", terms), all, func(ni fwk.NodeInfo) counts {
				c := counts{}
				for _, existing := range ni.GetPods() {
					if matchesAll(terms, existing.GetPod(), nil) {
						c.add(terms, ni.Node(), 1)
					}
				}
				return c
			}))
		}
		if terms := pi.RequiredAntiAffinityTerms; len(terms) > 0 {
			s.anti = layeredOn(p.cache.get(termsKey("N", terms), all, func(ni fwk.NodeInfo) counts {
				c := counts{}
				for _, existing := range ni.GetPods() {
					for _, t := range terms {
						if t.Matches(existing.GetPod(), nil) {
							c.add([]fwk.AffinityTerm{t}, ni.Node(), 1)
						}
					}
				}
				return c
			}))
		}
	}
	state.Write(preFilterKey, s)
	return nil, nil
}

func (s *preFilterState) countPod(existing *v1.Pod, node *v1.Node, delta int64) {
	if matchesAll(s.podInfo.RequiredAffinityTerms, existing, nil) {
		s.affinity.add(s.podInfo.RequiredAffinityTerms, node.Labels, delta)
	}
	for _, t := range s.podInfo.RequiredAntiAffinityTerms {
		if t.Matches(existing, nil) {
			s.anti.add([]fwk.AffinityTerm{t}, node.Labels, delta)
		}
	}
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return p }

// AddPod implements fwk.PreFilterExtensions.
func (p *Plugin) AddPod(_ context.Context, state fwk.CycleState, pod *v1.Pod, add fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	return p.update(state, pod, add, ni, 1)
}

// RemovePod implements fwk.PreFilterExtensions.
func (p *Plugin) RemovePod(_ context.Context, state fwk.CycleState, pod *v1.Pod, remove fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	return p.update(state, pod, remove, ni, -1)
}

func (p *Plugin) update(state fwk.CycleState, pod *v1.Pod, other fwk.PodInfo, ni fwk.NodeInfo, delta int64) *fwk.Status {
	d, err := state.Read(preFilterKey)
	if err != nil {
		return nil
	}
	s := d.(*preFilterState)
	for _, t := range other.GetRequiredAntiAffinityTerms() {
		if t.Matches(pod, s.nsLabels) {
			s.existingAnti.add([]fwk.AffinityTerm{t}, ni.Node().Labels, delta)
		}
	}
	s.countPod(other.GetPod(), ni.Node(), delta)
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
	if terms := s.podInfo.RequiredAffinityTerms; len(terms) > 0 {
		ok := true
		for _, t := range terms {
			v, has := node.Labels[t.TopologyKey]
			if !has || s.affinity.get(pair{t.TopologyKey, v}) <= 0 {
				ok = false
				break
			}
		}
		if !ok {
			// The first pod of a group whose members attract each other
			// may go anywhere its terms' keys exist.
			allKeys := true
			for _, t := range terms {
				if _, has := node.Labels[t.TopologyKey]; !has {
					allKeys = false
				}
			}
			if !(s.affinity.empty() && allKeys && matchesAll(terms, pod, s.nsLabels)) {
				return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
			}
		}
	}
	for _, t := range s.podInfo.RequiredAntiAffinityTerms {
		if v, has := node.Labels[t.TopologyKey]; has && s.anti.get(pair{t.TopologyKey, v}) > 0 {
			return fwk.NewStatus(fwk.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
		}
	}
	// Checked last, as upstream does, so that the reason names the
	// incoming pod's own terms when both apply.
	if len(s.existingAnti.base) == 0 && len(s.existingAnti.delta) == 0 {
		return nil
	}
	for _, k := range s.existingAnti.keys {
		if v, ok := node.Labels[k]; ok && s.existingAnti.get(pair{k, v}) > 0 {
			return fwk.NewStatus(fwk.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
		}
	}
	return nil
}

type scoreMap map[string]map[string]int64

func (m scoreMap) add(key, value string, w int64) {
	if m[key] == nil {
		m[key] = map[string]int64{}
	}
	m[key][value] += w
}

type preScoreState struct{ scores scoreMap }

func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore implements fwk.PreScorePlugin: it sums, per topology domain,
// the weights of preferred terms matching between the incoming pod and
// existing pods (and existing pods' required affinity, at
// hardPodAffinityWeight).
func (p *Plugin) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	pi := framework.NewPodInfo(pod)
	if pi.ParseErr != nil {
		return fwk.AsStatus(fmt.Errorf("parsing pod: %w", pi.ParseErr))
	}
	lister := p.h.SnapshotSharedLister().NodeInfos()
	hasPreferred := len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinityTerms) > 0
	var nodes []fwk.NodeInfo
	var err error
	if hasPreferred {
		nodes, err = lister.List()
	} else {
		nodes, err = lister.HavePodsWithAffinityList()
	}
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !hasPreferred && len(nodes) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	pref := p.resolve(weighted(pi.PreferredAffinityTerms))
	prefAnti := p.resolve(weighted(pi.PreferredAntiAffinityTerms))
	nsLabels := p.nsLabels(pod.Namespace)
	scores := scoreMap{}
	for _, ni := range nodes {
		node := ni.Node()
		pods := ni.GetPodsWithAffinity()
		if hasPreferred {
			pods = ni.GetPods()
		}
		for _, epi := range pods {
			existing := epi.GetPod()
			for i, t := range pref {
				if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(existing, nil) {
					scores.add(t.TopologyKey, v, int64(pi.PreferredAffinityTerms[i].Weight))
				}
			}
			for i, t := range prefAnti {
				if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(existing, nil) {
					scores.add(t.TopologyKey, v, -int64(pi.PreferredAntiAffinityTerms[i].Weight))
				}
			}
			if existing.Spec.Affinity == nil {
				continue
			}
			if p.hardWeight > 0 {
				for _, t := range epi.GetRequiredAffinityTerms() {
					if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(pod, nsLabels) {
						scores.add(t.TopologyKey, v, int64(p.hardWeight))
					}
				}
			}
			if p.ignoreExistingPref {
				continue
			}
			for _, t := range epi.GetPreferredAffinityTerms() {
				if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(pod, nsLabels) {
					scores.add(t.TopologyKey, v, int64(t.Weight))
				}
			}
			for _, t := range epi.GetPreferredAntiAffinityTerms() {
				if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(pod, nsLabels) {
					scores.add(t.TopologyKey, v, -int64(t.Weight))
				}
			}
		}
	}
	if len(scores) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	state.Write(preScoreKey, &preScoreState{scores: scores})
	return nil
}

// Score implements fwk.ScorePlugin.
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	d, err := state.Read(preScoreKey)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreKey, err))
	}
	var s int64
	for key, values := range d.(*preScoreState).scores {
		if v, ok := ni.Node().Labels[key]; ok {
			s += values[v]
		}
	}
	return s, nil
}

// NormalizeScore implements fwk.ScoreExtensions: min-max to [0, 100].
func (p *Plugin) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	if len(scores) == 0 {
		return nil
	}
	var minS, maxS int64 = math.MaxInt64, math.MinInt64
	for _, s := range scores {
		minS = min(minS, s.Score)
		maxS = max(maxS, s.Score)
	}
	for i := range scores {
		if maxS == minS {
			scores[i].Score = 0
			continue
		}
		scores[i].Score = fwk.MaxScore * (scores[i].Score - minS) / (maxS - minS)
	}
	return nil
}

// ScoreExtensions implements fwk.ScorePlugin.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// EventsToRegister implements fwk.EnqueueExtensions.
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Add | fwk.UpdatePodLabel | fwk.Delete}, QueueingHintFn: p.isSchedulableAfterPodChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: p.isSchedulableAfterNodeChange},
	}, nil
}
