package extendedresourcetoleration

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
)

// Plugin adds tolerations for requested extended resources.
type Plugin struct {
	*admission.Handler
}

var _ admission.MutationInterface = (*Plugin)(nil)

// extended reports whether name is an extended resource: domain-qualified
// outside kubernetes.io, and not a requests.* quota name.
func extended(name corev1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, "kubernetes.io/") && !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return nil
	}
	wanted := map[string]bool{}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for n := range c.Resources.Requests {
			if extended(n) {
				wanted[string(n)] = true
			}
		}
	}
	keys := make([]string, 0, len(wanted))
	for k := range wanted {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t := corev1.Toleration{Key: k, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
		present := false
		for _, have := range pod.Spec.Tolerations {
			if have.MatchToleration(&t) {
				present = true
			}
		}
		if !present {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
		}
	}
	return nil
}
