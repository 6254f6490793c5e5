package nodetaint

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
)

// notReady is the taint new nodes get.
var notReady = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}

// Plugin taints new nodes.
type Plugin struct {
	*admission.Handler
}

var _ admission.MutationInterface = (*Plugin)(nil)

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("nodes") || a.GetSubresource() != "" {
		return nil
	}
	node, ok := a.GetObject().(*corev1.Node)
	if !ok {
		return nil
	}
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&notReady) {
			return nil
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, notReady)
	return nil
}
