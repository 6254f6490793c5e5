// Package tainttoleration is the TaintToleration plugin: a node's
// NoSchedule and NoExecute taints keep off pods that do not tolerate them,
// and its PreferNoSchedule taints lower its score.
package tainttoleration

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// Name is the plugin's name in the configuration.
const Name = "TaintToleration"

const preScoreKey fwk.StateKey = "PreScore" + Name

// Plugin implements Filter, PreScore and Score.
type Plugin struct{}

// New is the plugin's factory.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return Plugin{}, nil }

// Name implements fwk.Plugin.
func (Plugin) Name() string { return Name }

// Filter implements fwk.FilterPlugin.
func (Plugin) Filter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	taint, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.FromContext(ctx), ni.Node().Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}, true)
	if !untolerated {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value))
}

type preScoreState struct{ tolerations []v1.Toleration }

func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore implements fwk.PreScorePlugin: it keeps the tolerations that
// can tolerate PreferNoSchedule taints.
func (Plugin) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	var tols []v1.Toleration
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	state.Write(preScoreKey, &preScoreState{tolerations: tols})
	return nil
}

// Score implements fwk.ScorePlugin: the count of intolerable
// PreferNoSchedule taints, reversed by normalization.
func (Plugin) Score(ctx context.Context, state fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	d, err := state.Read(preScoreKey)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreKey, err))
	}
	tols := d.(*preScoreState).tolerations
	var n int64
	for i := range ni.Node().Spec.Taints {
		t := &ni.Node().Spec.Taints[i]
		if t.Effect != v1.TaintEffectPreferNoSchedule {
			continue
		}
		if !v1helper.TolerationsTolerateTaint(klog.FromContext(ctx), tols, t, true) {
			n++
		}
	}
	return n, nil
}

// NormalizeScore implements fwk.ScoreExtensions.
func (Plugin) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	return framework.DefaultNormalizeScore(fwk.MaxScore, true, scores)
}

// ScoreExtensions implements fwk.ScorePlugin.
func (p Plugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// EventsToRegister implements fwk.EnqueueExtensions.
func (Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeTaint}, QueueingHintFn: isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodToleration}},
	}, nil
}

// isSchedulableAfterNodeChange is the queueing hint, as upstream's: a node
// helps when the pod tolerates its NoSchedule and NoExecute taints now
// and did not before.
func isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	node, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("expected a Node, got %T", newObj)
	}
	tolerated := func(n *v1.Node) bool {
		_, untolerated := v1helper.FindMatchingUntoleratedTaint(logger, n.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}, true)
		return !untolerated
	}
	if !tolerated(node) {
		return fwk.QueueSkip, nil
	}
	if old, ok := oldObj.(*v1.Node); ok && old != nil && tolerated(old) {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
