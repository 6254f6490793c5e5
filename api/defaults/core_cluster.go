package defaults

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// Namespace labels a named namespace with its own name, so that selectors
// (network policies, webhooks) can pick namespaces by name, and starts it in
// phase Active. A namespace with only generateName gets its label when the
// registry names it.
func Namespace(ns *corev1.Namespace) {
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// Node makes a node that reports a capacity but no allocatable report all of
// its capacity as allocatable.
func Node(n *corev1.Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = copyResourceList(n.Status.Capacity)
	}
	roundResourceList(&n.Status.Capacity)
	roundResourceList(&n.Status.Allocatable)
}

// LimitRange fills, for each Container item, the default limit from the max
// and the default request from the default limit, then from the min.
func LimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			fillMissing(item.Default, item.Max)
			fillMissing(item.DefaultRequest, item.Default)
			fillMissing(item.DefaultRequest, item.Min)
		}
		roundResourceList(&item.Max)
		roundResourceList(&item.Min)
		roundResourceList(&item.Default)
		roundResourceList(&item.DefaultRequest)
		roundResourceList(&item.MaxLimitRequestRatio)
	}
}

// fillMissing copies into l the resources of from that l lacks.
func fillMissing(l, from corev1.ResourceList) {
	for name, q := range from {
		if _, ok := l[name]; !ok {
			l[name] = q.DeepCopy()
		}
	}
}

// ResourceQuota rounds the quantities of a quota to milli precision; upstream
// sets nothing else.
func ResourceQuota(q *corev1.ResourceQuota) {
	roundResourceList(&q.Spec.Hard)
	roundResourceList(&q.Status.Hard)
	roundResourceList(&q.Status.Used)
}

// Secret gives a secret without a type the generic type Opaque, and folds
// the write-only stringData into data (stringData wins on a shared key), as
// upstream's conversion does: stringData is never stored nor returned.
func Secret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

// ConfigMap gives a config map an empty, non-nil data map. This is invisible
// in JSON (data is omitempty) but Go callers see it, as upstream's do.
func ConfigMap(cm *corev1.ConfigMap) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
}

// ReplicationController defaults a replication controller the way the
// oldest workload API did: selector and labels copied from the template
// when absent, one replica, and the template's pod spec defaults.
func ReplicationController(rc *corev1.ReplicationController) {
	if rc.Spec.Template != nil && rc.Spec.Template.Labels != nil {
		// Copies, where upstream shares the template's map: the JSON is the
		// same, and a later edit of one map cannot leak into the others.
		labels := rc.Spec.Template.Labels
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = maps.Clone(labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = maps.Clone(labels)
		}
	}
	if rc.Spec.Replicas == nil {
		// Declared in k8s.io/api as +default=1.
		rc.Spec.Replicas = new(int32(1))
	}
	if rc.Spec.Template != nil {
		podTemplateSpec(rc.Spec.Template)
	}
}
