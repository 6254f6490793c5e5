package noderesources

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// BalancedAllocation implements Score.
type BalancedAllocation struct {
	resources []configv1.ResourceSpec
}

// NewBalancedAllocation is NodeResourcesBalancedAllocation's factory.
func NewBalancedAllocation(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args, _ := obj.(*configv1.NodeResourcesBalancedAllocationArgs)
	b := &BalancedAllocation{resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}}
	if args != nil && len(args.Resources) > 0 {
		b.resources = args.Resources
	}
	return b, nil
}

// Name implements fwk.Plugin.
func (*BalancedAllocation) Name() string { return BalancedAllocationName }

// Score implements fwk.ScorePlugin: 100 × (1 − the standard deviation of
// the resources' requested fractions), with the pod placed.
func (b *BalancedAllocation) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	res := podResource(state, pod)
	var fractions []float64
	for _, r := range b.resources {
		alloc, req := amount(ni, res, v1.ResourceName(r.Name), true)
		if alloc == 0 {
			continue
		}
		fractions = append(fractions, math.Min(float64(req)/float64(alloc), 1))
	}
	return balancedScore(fractions), nil
}

func balancedScore(fractions []float64) int64 {
	var std float64
	switch len(fractions) {
	case 0, 1:
	case 2:
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	default:
		var sum float64
		for _, f := range fractions {
			sum += f
		}
		mean := sum / float64(len(fractions))
		var sq float64
		for _, f := range fractions {
			sq += (f - mean) * (f - mean)
		}
		std = math.Sqrt(sq / float64(len(fractions)))
	}
	return int64((1 - std) * float64(fwk.MaxScore))
}

// ScoreExtensions implements fwk.ScorePlugin.
func (*BalancedAllocation) ScoreExtensions() fwk.ScoreExtensions { return nil }
