package defaulttolerationseconds

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
)

// defaultSeconds is upstream's --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds default.
const defaultSeconds int64 = 300

// Plugin adds the default NoExecute tolerations.
type Plugin struct {
	*admission.Handler
	seconds int64
}

var _ admission.MutationInterface = (*Plugin)(nil)

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return nil
	}
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		if !tolerates(pod.Spec.Tolerations, key) {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(p.seconds),
			})
		}
	}
	return nil
}

// tolerates reports whether a toleration already covers key's NoExecute
// taint, in which case the pod's own choice stands.
func tolerates(ts []corev1.Toleration, key string) bool {
	for _, t := range ts {
		if (t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists)) &&
			(t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
			return true
		}
	}
	return false
}
