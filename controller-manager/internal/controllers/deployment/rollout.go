package deployment

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/ownership"
)

// newAndOld finds d's new ReplicaSet, bringing its revision and
// annotations up to date, and creates it when create is set and there is
// none.
func (c *Controller) newAndOld(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	newRS, oldRSs := findNewAndOld(d, rsList)
	var maxOld int64
	for _, rs := range oldRSs {
		maxOld = max(maxOld, revision(rs))
	}
	next := strconv.FormatInt(maxOld+1, 10)
	if newRS != nil {
		upd := newRS.DeepCopy()
		changed := copyAnnotations(d, upd)
		if revision(upd) < maxOld+1 {
			upd.Annotations[RevisionAnnotation] = next
			changed = true
		}
		if upd.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			upd.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			changed = true
		}
		if changed {
			got, err := c.client.AppsV1().ReplicaSets(upd.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
			if err != nil {
				return nil, nil, fmt.Errorf("update replicaset %s: %w", upd.Name, err)
			}
			newRS = got
		}
		if err := c.syncDeploymentRevision(ctx, d, newRS, FoundNewRSReason, fmt.Sprintf("Found new replica set %q", newRS.Name), false); err != nil {
			return nil, nil, err
		}
		return newRS, oldRSs, nil
	}
	if !create {
		return nil, oldRSs, nil
	}
	hash := templateHash(&d.Spec.Template, d.Status.CollisionCount)
	template := *d.Spec.Template.DeepCopy()
	template.Labels = cloneStrings(template.Labels)
	template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	selector := d.Spec.Selector.DeepCopy()
	if selector.MatchLabels == nil {
		selector.MatchLabels = map[string]string{}
	}
	selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	want := newRSReplicas(d, append(slices.Clone(oldRSs), nil), nil)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{ownership.Ref(d, Kind)},
			Labels:          cloneStrings(template.Labels),
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr.To(want),
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        selector,
			Template:        template,
		},
	}
	copyAnnotations(d, rs)
	rs.Annotations[RevisionAnnotation] = next
	setReplicasAnnotations(rs, replicas(d), replicas(d)+maxSurge(d))
	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		existing, gerr := c.rss.ReplicaSets(d.Namespace).Get(rs.Name)
		if gerr == nil && metav1.IsControlledBy(existing, d) && equalIgnoreHash(&existing.Spec.Template, &d.Spec.Template) {
			return existing.DeepCopy(), oldRSs, nil
		}
		// The name is taken by another template: move to the next hash.
		d.Status.CollisionCount = ptr.To(ptr.Deref(d.Status.CollisionCount, 0) + 1)
		if _, uerr := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); uerr != nil {
			return nil, nil, fmt.Errorf("record hash collision: %w", uerr)
		}
		return nil, nil, fmt.Errorf("replicaset name %s taken; collision count now %d", rs.Name, *d.Status.CollisionCount)
	}
	if err != nil {
		if d.Spec.ProgressDeadlineSeconds != nil {
			msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, FailedRSCreateReason, msg, c.now()))
			_, _ = c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		}
		c.recorder.Eventf(d, corev1.EventTypeWarning, FailedRSCreateReason, "Failed to create new replica set %q: %v", rs.Name, err)
		return nil, nil, fmt.Errorf("create replicaset %s: %w", rs.Name, err)
	}
	if want > 0 {
		c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, want)
	}
	if err := c.syncDeploymentRevision(ctx, d, created, NewReplicaSetReason, fmt.Sprintf("Created new replica set %q", created.Name), true); err != nil {
		return nil, nil, err
	}
	return created, oldRSs, nil
}

// syncDeploymentRevision copies newRS's revision to d and marks progress.
// A created ReplicaSet always restarts the progress clock (force); a found
// one only starts it when there is none.
func (c *Controller) syncDeploymentRevision(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, reason, msg string, force bool) error {
	changed := false
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if rev := newRS.Annotations[RevisionAnnotation]; d.Annotations[RevisionAnnotation] != rev {
		d.Annotations[RevisionAnnotation] = rev
		got, err := c.client.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("update revision of deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
		*d = *got
	}
	if hasDeadline(d) && (force || getCondition(d.Status, appsv1.DeploymentProgressing) == nil) {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reason, msg, c.now()))
		changed = true
	}
	if !changed {
		return nil
	}
	got, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	*d = *got
	return nil
}

// newRSReplicas is how many replicas the new ReplicaSet may have now.
func newRSReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return replicas(d)
	}
	maxTotal := replicas(d) + maxSurge(d)
	// Upstream counts only the sizes asked for; a ReplicaSet just scaled
	// down may still have its pods, so count those too and never have more
	// than maxSurge extra pods at once.
	var current int32
	for _, rs := range all {
		if rs != nil {
			current += max(rsReplicas(rs), rs.Status.Replicas)
		}
	}
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	up := min(maxTotal-current, replicas(d)-rsReplicas(newRS))
	return rsReplicas(newRS) + max(up, 0)
}

func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.newAndOld(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	all := append(slices.Clone(oldRSs), newRS)
	scaled, err := c.reconcileNew(ctx, d, all, newRS)
	if err != nil {
		return err
	}
	if scaled {
		return c.syncRolloutStatus(ctx, d, all, newRS)
	}
	scaled, err = c.reconcileOld(ctx, d, oldRSs, newRS)
	if err != nil {
		return err
	}
	if scaled {
		return c.syncRolloutStatus(ctx, d, append(slices.Clone(oldRSs), newRS), newRS)
	}
	if complete(d, c.calculateStatus(d, all, newRS)) {
		if err := c.cleanup(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, d, all, newRS)
}

func (c *Controller) reconcileNew(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	switch {
	case rsReplicas(newRS) == replicas(d):
		return false, nil
	case rsReplicas(newRS) > replicas(d):
		return c.scaleReplicaSet(ctx, d, newRS, replicas(d))
	}
	return c.scaleReplicaSet(ctx, d, newRS, newRSReplicas(d, all, newRS))
}

// reconcileOld scales old ReplicaSets down as far as maxUnavailable
// allows, unhealthy replicas first.
func (c *Controller) reconcileOld(ctx context.Context, d *appsv1.Deployment, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	if sumSpec(oldRSs) == 0 {
		return false, nil
	}
	all := append(slices.Clone(oldRSs), newRS)
	minAvailable := replicas(d) - maxUnavailable(d)
	newUnavailable := rsReplicas(newRS)
	if newRS != nil {
		newUnavailable -= min(newRS.Status.AvailableReplicas, rsReplicas(newRS))
	}
	maxScaledDown := sumSpec(all) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	old := slices.Clone(oldRSs)
	byCreation(old)
	var cleaned int32
	for _, rs := range old {
		if cleaned >= maxScaledDown {
			break
		}
		unhealthy := rsReplicas(rs) - rs.Status.AvailableReplicas
		if rsReplicas(rs) == 0 || unhealthy <= 0 || rs.Status.ObservedGeneration < rs.Generation {
			continue
		}
		n := min(maxScaledDown-cleaned, unhealthy)
		if _, err := c.scaleReplicaSet(ctx, d, rs, rsReplicas(rs)-n); err != nil {
			return false, err
		}
		cleaned += n
	}
	all = append(slices.Clone(old), newRS)
	// A ReplicaSet just scaled down still reports the pods it is deleting
	// as available until its controller catches up; counting more than
	// its size would let us scale down past maxUnavailable.
	var available int32
	for _, rs := range all {
		if rs != nil {
			available += min(rs.Status.AvailableReplicas, rsReplicas(rs))
		}
	}
	var scaledDown int32
	if available > minAvailable {
		total := available - minAvailable
		for _, rs := range old {
			if scaledDown >= total {
				break
			}
			if rsReplicas(rs) == 0 {
				continue
			}
			n := min(rsReplicas(rs), total-scaledDown)
			if _, err := c.scaleReplicaSet(ctx, d, rs, rsReplicas(rs)-n); err != nil {
				return false, err
			}
			scaledDown += n
		}
	}
	return cleaned+scaledDown > 0, nil
}

func (c *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.newAndOld(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	all := append(slices.Clone(oldRSs), newRS)
	scaled := false
	for _, rs := range activeReplicaSets(oldRSs) {
		ok, err := c.scaleReplicaSet(ctx, d, rs, 0)
		if err != nil {
			return err
		}
		scaled = scaled || ok
	}
	if scaled {
		return c.syncRolloutStatus(ctx, d, all, newRS)
	}
	running, err := c.oldPodsRunning(d, oldRSs)
	if err != nil {
		return err
	}
	if running {
		return c.syncRolloutStatus(ctx, d, all, newRS)
	}
	if newRS == nil {
		newRS, oldRSs, err = c.newAndOld(ctx, d, rsList, true)
		if err != nil {
			return err
		}
		all = append(slices.Clone(oldRSs), newRS)
	}
	if _, err := c.scaleReplicaSet(ctx, d, newRS, replicas(d)); err != nil {
		return err
	}
	if complete(d, c.calculateStatus(d, all, newRS)) {
		if err := c.cleanup(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, d, all, newRS)
}

// oldPodsRunning reports whether any pod of the old ReplicaSets has not
// finished, which Recreate waits out.
func (c *Controller) oldPodsRunning(d *appsv1.Deployment, oldRSs []*appsv1.ReplicaSet) (bool, error) {
	for _, rs := range oldRSs {
		if rs.Status.Replicas > 0 {
			return true, nil
		}
	}
	all, err := c.pods.Pods(d.Namespace).List(labels.Everything())
	if err != nil {
		return false, fmt.Errorf("list pods: %w", err)
	}
	old := map[string]bool{}
	for _, rs := range oldRSs {
		old[string(rs.UID)] = true
	}
	for _, p := range all {
		ref := metav1.GetControllerOf(p)
		if ref == nil || !old[string(ref.UID)] {
			continue
		}
		if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			return true, nil
		}
	}
	return false, nil
}

// syncScale handles a paused Deployment or a change of replicas: it sizes
// the ReplicaSets without rolling anything.
func (c *Controller) syncScale(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.newAndOld(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := c.cleanup(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncStatusOnly(ctx, d, rsList)
}

func (c *Controller) syncStatusOnly(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs := findNewAndOld(d, rsList)
	status := c.calculateStatus(d, append(slices.Clone(oldRSs), newRS), newRS)
	if apiequality.Semantic.DeepEqual(status, d.Status) {
		return nil
	}
	d.Status = status
	if _, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}

// scale sizes the ReplicaSets to d's replicas: the only active one takes
// them all; during a rolling update the difference is shared out in
// proportion to their sizes.
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	if rs := activeOrLatest(newRS, oldRSs); rs != nil {
		// Same size still refreshes the replica annotations.
		_, err := c.scaleReplicaSet(ctx, d, rs, replicas(d))
		return err
	}
	if saturated(d, newRS) {
		for _, rs := range activeReplicaSets(oldRSs) {
			if _, err := c.scaleReplicaSet(ctx, d, rs, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return nil
	}
	active := activeReplicaSets(append(slices.Clone(oldRSs), newRS))
	current := sumSpec(active)
	allowed := int32(0)
	if replicas(d) > 0 {
		allowed = replicas(d) + maxSurge(d)
	}
	toAdd := allowed - current
	if toAdd == 0 || current == 0 {
		return nil
	}
	// Bigger first when growing, smaller first when shrinking; newer
	// first among equals, as upstream.
	slices.SortStableFunc(active, func(a, b *appsv1.ReplicaSet) int {
		if rsReplicas(a) != rsReplicas(b) {
			if (rsReplicas(a) > rsReplicas(b)) == (toAdd > 0) {
				return -1
			}
			return 1
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	sizes := make([]int32, len(active))
	var added int32
	for i, rs := range active {
		share := int32(math.Round(float64(rsReplicas(rs)) * float64(toAdd) / float64(current)))
		if toAdd > 0 {
			share = min(share, toAdd-added)
		} else {
			share = max(share, toAdd-added)
		}
		sizes[i] = rsReplicas(rs) + share
		added += share
	}
	sizes[0] += toAdd - added
	for i, rs := range active {
		if _, err := c.scaleReplicaSet(ctx, d, rs, max(sizes[i], 0)); err != nil {
			return err
		}
	}
	return nil
}

func activeOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	all := slices.Clone(oldRSs)
	if newRS != nil {
		all = append(all, newRS)
	}
	active := activeReplicaSets(all)
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		byCreation(all)
		return all[len(all)-1]
	case 1:
		return active[0]
	}
	return nil
}

func saturated(d *appsv1.Deployment, newRS *appsv1.ReplicaSet) bool {
	if newRS == nil {
		return false
	}
	desired, ok := desiredReplicasAnnotation(newRS)
	return ok && rsReplicas(newRS) == replicas(d) && desired == replicas(d) && newRS.Status.AvailableReplicas == replicas(d)
}

// scaleReplicaSet sets rs's replicas and replica annotations, recording an
// event when the size changes; it reports whether the size changed.
func (c *Controller) scaleReplicaSet(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, size int32) (bool, error) {
	if rs == nil {
		return false, nil
	}
	sizeChange := rsReplicas(rs) != size
	upd := rs.DeepCopy()
	annChange := setReplicasAnnotations(upd, replicas(d), replicas(d)+maxSurge(d))
	if !sizeChange && !annChange {
		return false, nil
	}
	from := rsReplicas(rs)
	upd.Spec.Replicas = ptr.To(size)
	got, err := c.client.AppsV1().ReplicaSets(upd.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		return false, fmt.Errorf("scale replicaset %s to %d: %w", rs.Name, size, err)
	}
	*rs = *got
	if sizeChange {
		dir := "up"
		if size < from {
			dir = "down"
		}
		c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", dir, rs.Name, from, size)
	}
	return sizeChange, nil
}

// cleanup deletes the oldest idle old ReplicaSets beyond
// revisionHistoryLimit.
func (c *Controller) cleanup(ctx context.Context, d *appsv1.Deployment, oldRSs []*appsv1.ReplicaSet) error {
	if d.Spec.RevisionHistoryLimit == nil {
		return nil
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := len(cleanable) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	slices.SortStableFunc(cleanable, func(a, b *appsv1.ReplicaSet) int {
		ra, rb := revision(a), revision(b)
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	for _, rs := range cleanable[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete old replicaset %s: %w", rs.Name, err)
		}
	}
	return nil
}

// calculateStatus is d's status from its ReplicaSets.
func (c *Controller) calculateStatus(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) appsv1.DeploymentStatus {
	available := sumStatus(all, func(s *appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas })
	s := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            sumStatus(all, func(s *appsv1.ReplicaSetStatus) int32 { return s.Replicas }),
		ReadyReplicas:       sumStatus(all, func(s *appsv1.ReplicaSetStatus) int32 { return s.ReadyReplicas }),
		AvailableReplicas:   available,
		UnavailableReplicas: max(sumSpec(all)-available, 0),
		CollisionCount:      d.Status.CollisionCount,
		Conditions:          slices.Clone(d.Status.Conditions),
	}
	if newRS != nil {
		s.UpdatedReplicas = newRS.Status.Replicas
	}
	if available >= replicas(d)-maxUnavailable(d) {
		setCondition(&s, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, MinimumAvailableReason, "Deployment has minimum availability.", c.now()))
	} else {
		setCondition(&s, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, MinimumUnavailableReason, "Deployment does not have minimum availability.", c.now()))
	}
	return s
}

func complete(d *appsv1.Deployment, s appsv1.DeploymentStatus) bool {
	return s.UpdatedReplicas == replicas(d) && s.Replicas == replicas(d) && s.AvailableReplicas == replicas(d) && s.ObservedGeneration >= d.Generation
}

func progressing(d *appsv1.Deployment, s appsv1.DeploymentStatus) bool {
	old := d.Status
	return s.UpdatedReplicas > old.UpdatedReplicas ||
		s.Replicas-s.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		s.ReadyReplicas > old.ReadyReplicas || s.AvailableReplicas > old.AvailableReplicas
}

func hasDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// syncRolloutStatus writes d's status with the Progressing condition of a
// rollout: progressing, complete or past its deadline.
func (c *Controller) syncRolloutStatus(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	s := c.calculateStatus(d, all, newRS)
	if !hasDeadline(d) {
		removeCondition(&s, appsv1.DeploymentProgressing)
	}
	cur := getCondition(s, appsv1.DeploymentProgressing)
	done := s.Replicas == s.UpdatedReplicas && cur != nil && cur.Reason == NewRSAvailableReason
	now := c.now()
	if hasDeadline(d) && !done && newRS != nil {
		switch {
		case complete(d, s):
			setCondition(&s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewRSAvailableReason,
				fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name), now))
		case progressing(d, s):
			cond := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReplicaSetUpdatedReason,
				fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name), now)
			// Progress moves the deadline: lastUpdateTime always changes.
			if cur != nil && cur.Status == corev1.ConditionTrue {
				cond.LastTransitionTime = cur.LastTransitionTime
			}
			removeCondition(&s, appsv1.DeploymentProgressing)
			s.Conditions = append(s.Conditions, cond)
		case timedOut(d, s, now):
			setCondition(&s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, TimedOutReason,
				fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name), now))
		}
	}
	if failure := replicaFailure(all); failure != nil {
		setCondition(&s, newCondition(appsv1.DeploymentReplicaFailure, failure.Status, failure.Reason, failure.Message, now))
	} else {
		removeCondition(&s, appsv1.DeploymentReplicaFailure)
	}
	if apiequality.Semantic.DeepEqual(s, d.Status) {
		c.requeueStuck(d, s, now)
		return nil
	}
	d.Status = s
	got, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	c.requeueStuck(got, got.Status, now)
	return nil
}

func timedOut(d *appsv1.Deployment, s appsv1.DeploymentStatus, now time.Time) bool {
	cond := getCondition(s, appsv1.DeploymentProgressing)
	if cond == nil || !hasDeadline(d) {
		return false
	}
	switch cond.Reason {
	case NewRSAvailableReason:
		return false
	case TimedOutReason:
		return true
	}
	deadline := time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
	return cond.LastUpdateTime.Add(deadline).Before(now)
}

// requeueStuck looks at d again when its progress deadline passes, since
// no event may come to tell us it did.
func (c *Controller) requeueStuck(d *appsv1.Deployment, s appsv1.DeploymentStatus, now time.Time) {
	cond := getCondition(s, appsv1.DeploymentProgressing)
	if !hasDeadline(d) || cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason == NewRSAvailableReason {
		return
	}
	after := cond.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
	key := d.Namespace + "/" + d.Name
	if after < time.Second {
		c.loop.Add(key)
		return
	}
	c.loop.AddAfter(key, after)
}

func replicaFailure(all []*appsv1.ReplicaSet) *appsv1.ReplicaSetCondition {
	for _, rs := range all {
		if rs == nil {
			continue
		}
		for i := range rs.Status.Conditions {
			if rs.Status.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure && rs.Status.Conditions[i].Status == corev1.ConditionTrue {
				return &rs.Status.Conditions[i]
			}
		}
	}
	return nil
}
