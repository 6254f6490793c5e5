package deployment

import (
	"maps"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"trireme.dev/controller-manager/internal/history"
)

// Annotations and reasons as upstream spells them; kubectl reads them.
const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	lastAppliedAnnotation     = "kubectl.kubernetes.io/last-applied-configuration"

	NewReplicaSetReason      = "NewReplicaSetCreated"
	FoundNewRSReason         = "FoundNewReplicaSet"
	ReplicaSetUpdatedReason  = "ReplicaSetUpdated"
	NewRSAvailableReason     = "NewReplicaSetAvailable"
	TimedOutReason           = "ProgressDeadlineExceeded"
	PausedReason             = "DeploymentPaused"
	ResumedReason            = "DeploymentResumed"
	MinimumAvailableReason   = "MinimumReplicasAvailable"
	MinimumUnavailableReason = "MinimumReplicasUnavailable"
	FailedRSCreateReason     = "ReplicaSetCreateError"
)

// annotationsNotCopied stay on the Deployment or the ReplicaSet only.
var annotationsNotCopied = map[string]bool{
	lastAppliedAnnotation:               true,
	RevisionAnnotation:                  true,
	RevisionHistoryAnnotation:           true,
	DesiredReplicasAnnotation:           true,
	MaxReplicasAnnotation:               true,
	"deprecated.deployment.rollback.to": true,
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func rsReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

// templateHash names a pod template as upstream does (the
// pod-template-hash); the collision count changes it when the name is
// taken by a different template.
func templateHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	return history.PodTemplateHash(t, collisionCount)
}

// equalIgnoreHash compares templates without the pod-template-hash label.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

func byCreation(list []*appsv1.ReplicaSet) {
	slices.SortStableFunc(list, func(a, b *appsv1.ReplicaSet) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
}

// findNewAndOld splits list into the ReplicaSet of d's template (the oldest
// one, if several) and the others.
func findNewAndOld(d *appsv1.Deployment, list []*appsv1.ReplicaSet) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet) {
	sorted := slices.Clone(list)
	byCreation(sorted)
	var newRS *appsv1.ReplicaSet
	var old []*appsv1.ReplicaSet
	for _, rs := range sorted {
		if newRS == nil && equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			newRS = rs
			continue
		}
		old = append(old, rs)
	}
	return newRS, old
}

func activeReplicaSets(list []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range list {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func revision(obj metav1.Object) int64 {
	v, err := strconv.ParseInt(obj.GetAnnotations()[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

func desiredReplicasAnnotation(rs *appsv1.ReplicaSet) (int32, bool) {
	v, err := strconv.ParseInt(rs.Annotations[DesiredReplicasAnnotation], 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(v), true
}

// fenceposts resolves maxSurge (rounded up) and maxUnavailable (rounded
// down) against d's replicas; both zero would deadlock, so unavailable
// becomes 1.
func fenceposts(d *appsv1.Deployment) (surge, unavailable int32) {
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil {
		return 0, 0
	}
	desired := int(replicas(d))
	s, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxSurge, intstr.FromString("25%")), desired, true)
	u, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxUnavailable, intstr.FromString("25%")), desired, false)
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u)
}

func maxSurge(d *appsv1.Deployment) int32 {
	s, _ := fenceposts(d)
	return s
}

// maxUnavailable is the pods d may have unavailable, at most its replicas.
func maxUnavailable(d *appsv1.Deployment) int32 {
	_, u := fenceposts(d)
	if replicas(d) == 0 {
		return 0
	}
	return min(u, replicas(d))
}

func sumSpec(list []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range list {
		n += rsReplicas(rs)
	}
	return n
}

func sumStatus(list []*appsv1.ReplicaSet, f func(*appsv1.ReplicaSetStatus) int32) int32 {
	var n int32
	for _, rs := range list {
		if rs != nil {
			n += f(&rs.Status)
		}
	}
	return n
}

func newCondition(t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastUpdateTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
}

func getCondition(s appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// setCondition replaces the condition of c's type; a condition whose status
// and reason are unchanged is left as it is.
func setCondition(s *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getCondition(*s, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(s, c.Type)
	s.Conditions = append(s.Conditions, c)
}

func removeCondition(s *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	out := s.Conditions[:0:0]
	for _, c := range s.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	s.Conditions = out
}

// copyAnnotations copies d's annotations that belong on its ReplicaSets and
// reports whether rs changed.
func copyAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if annotationsNotCopied[k] {
			continue
		}
		if rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

// setReplicasAnnotations records the desired and maximum replicas rs was
// sized for, which scaling reads back; it reports whether rs changed.
func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, max int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	d, m := strconv.Itoa(int(desired)), strconv.Itoa(int(max))
	if rs.Annotations[DesiredReplicasAnnotation] == d && rs.Annotations[MaxReplicasAnnotation] == m {
		return false
	}
	rs.Annotations[DesiredReplicasAnnotation] = d
	rs.Annotations[MaxReplicasAnnotation] = m
	return true
}

func cloneStrings(m map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	return out
}
