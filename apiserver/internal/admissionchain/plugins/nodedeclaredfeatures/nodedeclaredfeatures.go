package nodedeclaredfeatures

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	ndftypes "k8s.io/component-helpers/nodedeclaredfeatures/types"

	"trireme.dev/apiserver/internal/admissionchain/nodelookup"
)

// Plugin matches pod updates against their node's declared features.
type Plugin struct {
	*admission.Handler
	nodelookup.Nodes
	features *ndf.Framework
}

var _ admission.ValidationInterface = (*Plugin)(nil)

// New returns the NodeDeclaredFeatureValidator plugin over every feature
// the library knows.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Update), features: ndf.DefaultFramework}
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") {
		return nil
	}
	switch a.GetSubresource() {
	case "", "resize", "ephemeralcontainers":
	default:
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil
	}
	old, ok := a.GetOldObject().(*corev1.Pod)
	if !ok {
		return nil
	}
	node, err := p.Get(ctx, pod.Spec.NodeName)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if node == nil || len(node.Status.DeclaredFeatures) == 0 {
		return nil
	}
	// Features graduate out of the registry's concern past their
	// MaxVersion; the node's kubelet version says which still matter.
	kubelet, err := version.ParseGeneric(node.Status.NodeInfo.KubeletVersion)
	if err != nil {
		return nil
	}
	required, err := p.features.InferForPodUpdate(
		&ndftypes.PodInfo{Spec: &old.Spec, Status: &old.Status},
		&ndftypes.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, kubelet)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("infer features of pod update: %w", err))
	}
	match, err := p.features.MatchNode(required, node)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("match node %s features: %w", node.Name, err))
	}
	if !match.IsMatch {
		return admission.NewForbidden(a, fmt.Errorf("pod update requires features %s which are not available on node %q",
			strings.Join(match.UnsatisfiedRequirements, ", "), node.Name))
	}
	return nil
}
