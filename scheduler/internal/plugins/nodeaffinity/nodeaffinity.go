// Package nodeaffinity is the NodeAffinity plugin: spec.nodeSelector and
// required node affinity filter nodes, preferred node affinity scores them,
// and the profile may add affinity of its own (args.addedAffinity).
package nodeaffinity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// Name is the plugin's name in the configuration.
const Name = "NodeAffinity"

// Upstream's reasons.
const (
	ErrReasonPod                   = "node(s) didn't match Pod's node affinity/selector"
	errReasonEnforced              = "node(s) didn't match scheduler-enforced node affinity"
	errReasonConflict              = "pod affinity terms conflict"
	preFilterKey      fwk.StateKey = "PreFilter" + Name
	preScoreKey       fwk.StateKey = "PreScore" + Name
)

// Plugin implements PreFilter, Filter, PreScore and Score.
type Plugin struct {
	added          *nodeaffinity.NodeSelector
	addedPreferred *nodeaffinity.PreferredSchedulingTerms
}

// New is the plugin's factory.
func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	p := &Plugin{}
	args, _ := obj.(*configv1.NodeAffinityArgs)
	if args == nil || args.AddedAffinity == nil {
		return p, nil
	}
	var err error
	if r := args.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
		if p.added, err = nodeaffinity.NewNodeSelector(r); err != nil {
			return nil, fmt.Errorf("addedAffinity: %w", err)
		}
	}
	if t := args.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(t) > 0 {
		if p.addedPreferred, err = nodeaffinity.NewPreferredSchedulingTerms(t); err != nil {
			return nil, fmt.Errorf("addedAffinity: %w", err)
		}
	}
	return p, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

type preFilterState struct {
	required nodeaffinity.RequiredNodeAffinity
}

func (s *preFilterState) Clone() fwk.StateData { return s }

// PreFilter implements fwk.PreFilterPlugin. Required terms that all pin
// metadata.name narrow the nodes to those names.
func (pl *Plugin) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	a := pod.Spec.Affinity
	noRequired := a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noRequired && len(pod.Spec.NodeSelector) == 0 && pl.added == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	state.Write(preFilterKey, &preFilterState{required: nodeaffinity.GetRequiredNodeAffinity(pod)})
	if noRequired {
		return nil, nil
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var names sets.Set[string]
	for _, t := range terms {
		var termNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == "metadata.name" && r.Operator == v1.NodeSelectorOpIn {
				s := sets.New(r.Values...)
				if termNames == nil {
					termNames = s
				} else {
					termNames = termNames.Intersection(s)
				}
			}
		}
		if termNames == nil {
			// A term not pinning names may match any node.
			return nil, nil
		}
		if names == nil {
			names = termNames
		} else {
			names = names.Union(termNames)
		}
	}
	if names != nil && names.Len() == 0 {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, errReasonConflict)
	}
	return &fwk.PreFilterResult{NodeNames: names}, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (*Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter implements fwk.FilterPlugin.
func (pl *Plugin) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	if pl.added != nil && !pl.added.Match(node) {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, errReasonEnforced)
	}
	var required nodeaffinity.RequiredNodeAffinity
	if d, err := state.Read(preFilterKey); err == nil {
		required = d.(*preFilterState).required
	} else {
		required = nodeaffinity.GetRequiredNodeAffinity(pod)
	}
	ok, err := required.Match(node)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !ok {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

type preScoreState struct {
	preferred *nodeaffinity.PreferredSchedulingTerms
}

func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore implements fwk.PreScorePlugin.
func (pl *Plugin) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	a := pod.Spec.Affinity
	if (a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0) && pl.addedPreferred == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	st := &preScoreState{}
	if a != nil && a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		var err error
		if st.preferred, err = nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			return fwk.AsStatus(fmt.Errorf("parsing pod's preferred node affinity: %w", err))
		}
	}
	state.Write(preScoreKey, st)
	return nil
}

// Score implements fwk.ScorePlugin: the summed weights of the preferred
// terms the node matches.
func (pl *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	var s int64
	if pl.addedPreferred != nil {
		s += pl.addedPreferred.Score(ni.Node())
	}
	if d, err := state.Read(preScoreKey); err == nil && d.(*preScoreState).preferred != nil {
		s += d.(*preScoreState).preferred.Score(ni.Node())
	}
	return s, nil
}

// NormalizeScore implements fwk.ScoreExtensions.
func (*Plugin) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	return framework.DefaultNormalizeScore(fwk.MaxScore, false, scores)
}

// ScoreExtensions implements fwk.ScorePlugin.
func (pl *Plugin) ScoreExtensions() fwk.ScoreExtensions { return pl }

// EventsToRegister implements fwk.EnqueueExtensions.
func (pl *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange}}, nil
}

// isSchedulableAfterNodeChange is the queueing hint, as upstream's: a node
// helps only if it now matches the pod's (and the scheduler's) required
// affinity and did not before.
func (pl *Plugin) isSchedulableAfterNodeChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	node, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("expected a Node, got %T", newObj)
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	matches := func(n *v1.Node) bool {
		if pl.added != nil && !pl.added.Match(n) {
			return false
		}
		ok, err := required.Match(n)
		return err == nil && ok
	}
	if !matches(node) {
		return fwk.QueueSkip, nil
	}
	if old, ok := oldObj.(*v1.Node); ok && old != nil && matches(old) {
		// It matched already: the change is not what the pod waits for.
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
