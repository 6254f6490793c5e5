package podtolerationrestriction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"

	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

// Namespace annotations the plugin reads.
const (
	defaultsAnnotation  = "scheduler.alpha.kubernetes.io/defaultTolerations"
	whitelistAnnotation = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
)

// memoryPressure lets pods that ask for resources stay schedulable on
// nodes under memory pressure; best-effort pods are the first evicted there.
var memoryPressure = corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// Plugin merges and restricts tolerations.
type Plugin struct {
	namespacelookup.Namespaces
	cfg *config
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

func newPlugin(cfg *config) *Plugin {
	return &Plugin{Namespaces: namespacelookup.New(admission.Create, admission.Update), cfg: cfg}
}

func podOf(a admission.Attributes) (*corev1.Pod, bool) {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil, false
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	return pod, ok
}

// namespaceLists returns the namespace's default tolerations and
// whitelist, each falling back to the cluster's when not annotated.
func (p *Plugin) namespaceLists(ctx context.Context, a admission.Attributes) (defaults, whitelist []corev1.Toleration, err error) {
	if !p.WaitForReady() {
		return nil, nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	ns, err := p.Get(ctx, a.GetNamespace())
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	read := func(key string, fallback []corev1.Toleration) ([]corev1.Toleration, error) {
		v, ok := ns.Annotations[key]
		if !ok {
			return fallback, nil
		}
		var ts []corev1.Toleration
		if err := json.Unmarshal([]byte(v), &ts); err != nil {
			return nil, admission.NewForbidden(a, fmt.Errorf("invalid %s annotation on namespace %s: %w", key, ns.Name, err))
		}
		return ts, nil
	}
	if defaults, err = read(defaultsAnnotation, p.cfg.Default); err != nil {
		return nil, nil, err
	}
	if whitelist, err = read(whitelistAnnotation, p.cfg.Whitelist); err != nil {
		return nil, nil, err
	}
	return defaults, whitelist, nil
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	var ts []corev1.Toleration
	if a.GetOperation() == admission.Create {
		defaults, _, err := p.namespaceLists(ctx, a)
		if err != nil {
			return err
		}
		merged, conflict := merge(pod.Spec.Tolerations, defaults)
		if conflict {
			return admission.NewForbidden(a, errors.New("namespace tolerations and pod tolerations conflict"))
		}
		ts = merged
	} else {
		ts = pod.Spec.Tolerations
	}
	if !bestEffort(pod) {
		ts, _ = merge(ts, []corev1.Toleration{memoryPressure})
	}
	pod.Spec.Tolerations = ts
	return nil
}

// bestEffort reports whether no container asks for or limits anything:
// such pods are the ones evicted under memory pressure.
func bestEffort(pod *corev1.Pod) bool {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			return false
		}
	}
	return pod.Spec.Resources == nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	_, whitelist, err := p.namespaceLists(ctx, a)
	if err != nil {
		return err
	}
	if len(whitelist) == 0 {
		return nil
	}
	for _, t := range pod.Spec.Tolerations {
		// The memory-pressure toleration this plugin adds is always allowed.
		if apiequality.Semantic.DeepEqual(t, memoryPressure) {
			continue
		}
		if !allowed(t, whitelist) {
			return admission.NewForbidden(a, errors.New("pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"))
		}
	}
	return nil
}

// merge adds extra to ts; a toleration of the same key and effect but a
// different value or operator is a conflict.
func merge(ts, extra []corev1.Toleration) ([]corev1.Toleration, bool) {
	out := append([]corev1.Toleration(nil), ts...)
	for _, e := range extra {
		dup := false
		for _, t := range ts {
			if t.Key == e.Key && t.Effect == e.Effect {
				if t.Operator != e.Operator || t.Value != e.Value {
					return nil, true
				}
				dup = true
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out, false
}

// allowed reports whether a whitelisted toleration covers t: same key,
// operator, value and effect (an empty whitelist effect covers all), and
// no longer a toleration time.
func allowed(t corev1.Toleration, whitelist []corev1.Toleration) bool {
	for _, w := range whitelist {
		if w.Key != t.Key || w.Operator != t.Operator || w.Value != t.Value {
			continue
		}
		if w.Effect != "" && w.Effect != t.Effect {
			continue
		}
		if w.TolerationSeconds != nil && (t.TolerationSeconds == nil || *t.TolerationSeconds > *w.TolerationSeconds) {
			continue
		}
		return true
	}
	return false
}
