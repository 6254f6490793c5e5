package podtopologylabels

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/nodelookup"
)

// copied are the node labels a bound pod receives.
var copied = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// Plugin copies node topology labels onto bindings.
type Plugin struct {
	*admission.Handler
	nodelookup.Nodes
}

var _ admission.MutationInterface = (*Plugin)(nil)

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "binding" {
		return nil
	}
	binding, ok := a.GetObject().(*corev1.Binding)
	if !ok || binding.Target.Kind != "Node" && binding.Target.Kind != "" {
		return nil
	}
	node, err := p.Get(ctx, binding.Target.Name)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if node == nil {
		// Binding to a missing node fails later with its own error.
		return nil
	}
	for _, k := range copied {
		v, ok := node.Labels[k]
		if !ok {
			continue
		}
		if binding.Labels == nil {
			binding.Labels = map[string]string{}
		}
		binding.Labels[k] = v
	}
	return nil
}
