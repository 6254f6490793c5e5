// Package statefulset is the controller that gives each StatefulSet replica
// a stable identity: pod <set>-<ordinal> with its hostname, subdomain and
// PersistentVolumeClaims from volumeClaimTemplates (kept or deleted per the
// PVC retention policy), created and deleted in ordinal order
// (OrderedReady) or all at once (Parallel), and rolled to new templates
// from the highest ordinal down, honouring partition and maxUnavailable.
// Each template is kept as a ControllerRevision, so status.currentRevision
// and updateRevision and `kubectl rollout history/undo` work.
package statefulset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/history"
	"trireme.dev/controller-manager/internal/ownership"
	"trireme.dev/controller-manager/internal/pods"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "statefulset"

// Kind is the StatefulSet kind.
var Kind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client creates, updates and deletes pods, claims and
	// ControllerRevisions and writes StatefulSet status.
	Client kubernetes.Interface
	// StatefulSets, Pods, Claims and Revisions are the shared informers;
	// New registers its handlers on StatefulSets and Pods.
	StatefulSets appsinformers.StatefulSetInformer
	Pods         coreinformers.PodInformer
	Claims       coreinformers.PersistentVolumeClaimInformer
	Revisions    appsinformers.ControllerRevisionInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the statefulset controller.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	sets      appslisters.StatefulSetLister
	pods      corelisters.PodLister
	claims    corelisters.PersistentVolumeClaimLister
	revisions appslisters.ControllerRevisionLister
	loop      *worker.Loop
	synced    []cache.InformerSynced
	now       func() time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		sets: o.StatefulSets.Lister(), pods: o.Pods.Lister(), claims: o.Claims.Lister(), revisions: o.Revisions.Lister(),
		synced: []cache.InformerSynced{o.StatefulSets.Informer().HasSynced, o.Pods.Informer().HasSynced,
			o.Claims.Informer().HasSynced, o.Revisions.Informer().HasSynced},
		now: o.Now,
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.StatefulSets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}); err != nil {
		return nil, fmt.Errorf("watch statefulsets: %w", err)
	}
	podChanged := func(obj any) {
		pod, ok := worker.ObjectAs[*corev1.Pod](obj)
		if !ok {
			return
		}
		if ref := metav1.GetControllerOf(pod); ref != nil {
			if ref.Kind == Kind.Kind {
				c.loop.Add(pod.Namespace + "/" + ref.Name)
			}
			return
		}
		sets, err := c.sets.StatefulSets(pod.Namespace).List(labels.Everything())
		if err != nil {
			return
		}
		for _, s := range sets {
			if sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector); err == nil && sel.Matches(labels.Set(pod.Labels)) {
				c.loop.Add(s.Namespace + "/" + s.Name)
			}
		}
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    podChanged,
		UpdateFunc: func(oldObj, obj any) { podChanged(oldObj); podChanged(obj) },
		DeleteFunc: podChanged,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

var ordinalName = regexp.MustCompile(`^(.*)-([0-9]+)$`)

// ordinal returns the ordinal in pod's name, or -1.
func ordinal(pod *corev1.Pod) int {
	m := ordinalName.FindStringSubmatch(pod.Name)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return -1
	}
	return n
}

func memberOf(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	m := ordinalName.FindStringSubmatch(pod.Name)
	return m != nil && m[1] == set.Name
}

func replicas(set *appsv1.StatefulSet) int {
	return int(ptr.Deref(set.Spec.Replicas, 1))
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.sets.StatefulSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get statefulset %s: %w", key, err)
	}
	set := cached.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil || selector.Empty() {
		c.recorder.Eventf(set, corev1.EventTypeWarning, "InvalidSelector", "Invalid selector: %v", err)
		return nil
	}
	canAdopt := ownership.RecheckOwner(set.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
	})
	allPods, err := c.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	var members []*corev1.Pod
	for _, p := range allPods {
		if memberOf(set, p) || metav1.IsControlledBy(p, set) {
			members = append(members, p)
		}
	}
	mine, err := ownership.Claim(ctx, &ownership.Claimer{Owner: set, Kind: Kind, Selector: selector, CanAdopt: canAdopt,
		Patch: func(ctx context.Context, ns, name string, patch []byte) error {
			_, err := c.client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}}, members)
	if err != nil {
		return fmt.Errorf("claim pods of statefulset %s: %w", key, err)
	}
	allRevs, err := c.revisions.ControllerRevisions(namespace).List(selector)
	if err != nil {
		return fmt.Errorf("list revisions: %w", err)
	}
	revs, err := ownership.Claim(ctx, &ownership.Claimer{Owner: set, Kind: Kind, Selector: selector, CanAdopt: canAdopt,
		Patch: func(ctx context.Context, ns, name string, patch []byte) error {
			_, err := c.client.AppsV1().ControllerRevisions(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}}, allRevs)
	if err != nil {
		return fmt.Errorf("claim revisions of statefulset %s: %w", key, err)
	}
	current, update, collisions, err := c.revisionsFor(ctx, set, revs)
	if err != nil {
		return err
	}
	status, syncErr := c.syncPods(ctx, set, mine, current, update)
	status.ObservedGeneration = set.Generation
	status.CollisionCount = ptr.To(collisions)
	if set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType &&
		status.UpdatedReplicas == status.Replicas && status.ReadyReplicas == status.Replicas && int(status.Replicas) == replicas(set) {
		status.CurrentReplicas = status.UpdatedReplicas
		status.CurrentRevision = status.UpdateRevision
	}
	if !apiequality.Semantic.DeepEqual(set.Status, status) {
		set.Status = status
		if _, err := c.client.AppsV1().StatefulSets(namespace).UpdateStatus(ctx, set, metav1.UpdateOptions{}); err != nil {
			return errors.Join(syncErr, fmt.Errorf("update status of statefulset %s: %w", key, err))
		}
	}
	if syncErr != nil {
		return syncErr
	}
	if set.Spec.MinReadySeconds > 0 && status.AvailableReplicas != status.ReadyReplicas {
		c.loop.AddAfter(key, time.Duration(set.Spec.MinReadySeconds)*time.Second)
	}
	return c.truncateHistory(ctx, set, mine, revs, status)
}

// revisionsFor returns the current and update revisions of set, creating
// or renumbering the update revision as needed.
func (c *Controller) revisionsFor(ctx context.Context, set *appsv1.StatefulSet, revs []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, *appsv1.ControllerRevision, int32, error) {
	data, err := history.TemplatePatch(set.Spec.Template)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("revision of statefulset %s: %w", set.Name, err)
	}
	collisions := ptr.Deref(set.Status.CollisionCount, 0)
	next := history.Next(revs)
	build := func(cc *int32) *appsv1.ControllerRevision {
		return history.New(set, Kind, set.Spec.Template.Labels, data, next, cc)
	}
	update, collisions, err := history.Sync(ctx, c.client, revs, build(&collisions), build, collisions)
	if err != nil {
		return nil, nil, 0, err
	}
	current := update
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			current = r
		}
	}
	return current, update, collisions, nil
}

// templateOf returns the pod template a revision holds.
func templateOf(rev *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(rev.Data.Raw, &patch); err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	return &patch.Spec.Template, nil
}

func revisionOf(pod *corev1.Pod) string { return pod.Labels[appsv1.ControllerRevisionHashLabelKey] }

func runningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && pods.Ready(p)
}

func healthy(p *corev1.Pod) bool {
	return p != nil && p.UID != "" && runningAndReady(p) && p.DeletionTimestamp == nil
}

func claimName(t *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, ord int) string {
	return fmt.Sprintf("%s-%s-%d", t.Name, set.Name, ord)
}

// newPod is replica ord of set at revision rev.
func newPod(set *appsv1.StatefulSet, rev *appsv1.ControllerRevision, ord int) (*corev1.Pod, error) {
	template, err := templateOf(rev)
	if err != nil {
		return nil, err
	}
	ref := ownership.Ref(set, Kind)
	pod := pods.FromTemplate(template, set.Name, &ref)
	pod.GenerateName = ""
	pod.Name = fmt.Sprintf("%s-%d", set.Name, ord)
	pod.Namespace = set.Namespace
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ord)
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = rev.Name
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		vol := corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(t, set, ord)},
		}}
		if j := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == t.Name }); j >= 0 {
			pod.Spec.Volumes[j] = vol
		} else {
			pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		}
	}
	return pod, nil
}

// replicaSet is one sync's view of a StatefulSet's pods: a slot per
// ordinal it wants, holding the pod there or nil, and the condemned pods
// beyond them, highest ordinal first.
type replicaSet struct {
	set             *appsv1.StatefulSet
	current, update *appsv1.ControllerRevision
	// start is the first ordinal; slots[i] holds ordinal start+i.
	start     int
	slots     []*corev1.Pod
	condemned []*corev1.Pod
	// monotonic is OrderedReady: one pod changes at a time, in order.
	monotonic bool
}

func newReplicaSet(set *appsv1.StatefulSet, mine []*corev1.Pod, current, update *appsv1.ControllerRevision) *replicaSet {
	r := &replicaSet{set: set, current: current, update: update,
		monotonic: set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement}
	if set.Spec.Ordinals != nil {
		r.start = int(set.Spec.Ordinals.Start)
	}
	n := replicas(set)
	r.slots = make([]*corev1.Pod, n)
	for _, p := range mine {
		if ord := ordinal(p); ord >= r.start && ord < r.start+n {
			r.slots[ord-r.start] = p
		} else {
			r.condemned = append(r.condemned, p)
		}
	}
	slices.SortFunc(r.condemned, func(a, b *corev1.Pod) int { return ordinal(b) - ordinal(a) })
	return r
}

// status counts the pods the set has now.
func (r *replicaSet) status(now time.Time) appsv1.StatefulSetStatus {
	status := appsv1.StatefulSetStatus{CurrentRevision: r.current.Name, UpdateRevision: r.update.Name, Conditions: r.set.Status.Conditions}
	for _, p := range append(slices.Clone(r.slots), r.condemned...) {
		if p == nil {
			continue
		}
		status.Replicas++
		if runningAndReady(p) {
			status.ReadyReplicas++
			if pods.Available(p, r.set.Spec.MinReadySeconds, now) {
				status.AvailableReplicas++
			}
		}
		if p.DeletionTimestamp == nil {
			if revisionOf(p) == r.current.Name {
				status.CurrentReplicas++
			}
			if revisionOf(p) == r.update.Name {
				status.UpdatedReplicas++
			}
		}
	}
	return status
}

// partition is the rolling update's partition: ordinals below it stay at
// the current revision.
func (r *replicaSet) partition() int {
	if ru := r.set.Spec.UpdateStrategy.RollingUpdate; r.set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType && ru != nil && ru.Partition != nil {
		return int(*ru.Partition)
	}
	return 0
}

// syncPods creates, deletes and updates set's pods and returns its status,
// which reflects what exists once this sync's changes are made, whichever
// way it returns.
func (c *Controller) syncPods(ctx context.Context, set *appsv1.StatefulSet, mine []*corev1.Pod, current, update *appsv1.ControllerRevision) (appsv1.StatefulSetStatus, error) {
	r := newReplicaSet(set, mine, current, update)
	if set.DeletionTimestamp != nil {
		return r.status(c.now()), nil
	}
	err := c.syncReplicas(ctx, r)
	return r.status(c.now()), err
}

// syncReplicas brings the pods to the set's replicas, then rolls them to
// the update revision. It stops early where OrderedReady must wait for a
// pod.
func (c *Controller) syncReplicas(ctx context.Context, r *replicaSet) error {
	// The first unhealthy pod, as upstream picks it: the lowest ordinal
	// not available among the replicas kept, else among the condemned
	// (held highest first). OrderedReady scale-down may delete it, but no
	// other unhealthy pod.
	now := c.now()
	available := func(p *corev1.Pod) bool {
		return healthy(p) && pods.Available(p, r.set.Spec.MinReadySeconds, now)
	}
	var firstUnhealthy *corev1.Pod
	for _, p := range r.slots {
		if p != nil && !available(p) {
			firstUnhealthy = p
			break
		}
	}
	for i := len(r.condemned) - 1; i >= 0 && firstUnhealthy == nil; i-- {
		if !available(r.condemned[i]) {
			firstUnhealthy = r.condemned[i]
		}
	}
	if done, err := c.fillSlots(ctx, r); done || err != nil {
		return err
	}
	if done, err := c.removeCondemned(ctx, r, firstUnhealthy); done || err != nil {
		return err
	}
	if r.set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return nil
	}
	return c.rollingUpdate(ctx, r.set, r.slots, r.update, r.partition(), r.start)
}

// fillSlots replaces terminal pods, creates the missing ones (at the
// current revision below the partition) and makes sure the pods' claims
// are owned as the retention policy says. It reports done when
// OrderedReady must wait before going further.
func (c *Controller) fillSlots(ctx context.Context, r *replicaSet) (done bool, err error) {
	set := r.set
	var errs []error
	for i, p := range r.slots {
		ord := r.start + i
		if p != nil && pods.Terminal(p) && p.DeletionTimestamp == nil {
			if err := c.deletePod(ctx, set, p); err != nil {
				return true, err
			}
			r.slots[i] = nil
			if r.monotonic {
				return true, nil
			}
			continue
		}
		if p == nil {
			rev := r.update
			if set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType && ord < r.start+r.partition() ||
				set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType && i < int(set.Status.CurrentReplicas) {
				rev = r.current
			}
			created, err := c.createReplica(ctx, set, rev, ord)
			if err != nil {
				errs = append(errs, err)
				if r.monotonic {
					return true, errors.Join(errs...)
				}
				continue
			}
			r.slots[i] = created
			if r.monotonic {
				return true, nil
			}
			continue
		}
		if p.DeletionTimestamp != nil {
			if r.monotonic {
				return true, nil
			}
			continue
		}
		if r.monotonic && (!runningAndReady(p) || !pods.Available(p, set.Spec.MinReadySeconds, c.now())) {
			return true, nil
		}
		if err := c.ensureClaimOwners(ctx, set, p, ord, false); err != nil {
			errs = append(errs, err)
		}
	}
	return len(errs) > 0, errors.Join(errs...)
}

// removeCondemned deletes the pods beyond the set's replicas, highest
// ordinal first, after their claims' owners are set for the retention
// policy. It reports done when OrderedReady must wait before going
// further.
func (c *Controller) removeCondemned(ctx context.Context, r *replicaSet, firstUnhealthy *corev1.Pod) (done bool, err error) {
	for _, p := range r.condemned {
		if p.DeletionTimestamp != nil {
			if r.monotonic {
				return true, nil
			}
			continue
		}
		if r.monotonic && p != firstUnhealthy && (!healthy(p) || !pods.Available(p, r.set.Spec.MinReadySeconds, c.now())) {
			return true, nil
		}
		if err := c.ensureClaimOwners(ctx, r.set, p, ordinal(p), true); err != nil {
			return true, err
		}
		if err := c.deletePod(ctx, r.set, p); err != nil {
			return true, err
		}
		if r.monotonic {
			return true, nil
		}
	}
	return false, nil
}

// rollingUpdate deletes pods of old revisions from the highest ordinal
// down to the partition, at most maxUnavailable unavailable at once.
func (c *Controller) rollingUpdate(ctx context.Context, set *appsv1.StatefulSet, slots []*corev1.Pod, update *appsv1.ControllerRevision, partition, start int) error {
	maxUnavailable := 1
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, len(slots), true)
		if err == nil {
			maxUnavailable = max(v, 1)
		}
	}
	lo := max(partition-start, 0)
	unavailable := 0
	for i := lo; i < len(slots); i++ {
		if !healthy(slots[i]) {
			unavailable++
		}
	}
	for i := len(slots) - 1; i >= lo; i-- {
		p := slots[i]
		if p == nil || p.DeletionTimestamp != nil || revisionOf(p) == update.Name {
			continue
		}
		if healthy(p) {
			if unavailable >= maxUnavailable {
				return nil
			}
			unavailable++
		}
		if err := c.deletePod(ctx, set, p); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, p *corev1.Pod) error {
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		c.recorder.Eventf(set, corev1.EventTypeWarning, "FailedDelete", "delete Pod %s in StatefulSet %s failed error: %v", p.Name, set.Name, err)
		return fmt.Errorf("delete pod %s: %w", p.Name, err)
	}
	c.recorder.Eventf(set, corev1.EventTypeNormal, "SuccessfulDelete", "delete Pod %s in StatefulSet %s successful", p.Name, set.Name)
	return nil
}

// createReplica creates replica ord's claims, then its pod.
func (c *Controller) createReplica(ctx context.Context, set *appsv1.StatefulSet, rev *appsv1.ControllerRevision, ord int) (*corev1.Pod, error) {
	pod, err := newPod(set, rev, ord)
	if err != nil {
		return nil, err
	}
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		name := claimName(t, set, ord)
		if _, err := c.claims.PersistentVolumeClaims(set.Namespace).Get(name); err == nil {
			continue
		}
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: set.Namespace,
				Labels:      maps.Clone(t.Labels),
				Annotations: maps.Clone(t.Annotations),
			},
			Spec: *t.Spec.DeepCopy(),
		}
		if claim.Labels == nil {
			claim.Labels = map[string]string{}
		}
		maps.Copy(claim.Labels, set.Spec.Selector.MatchLabels)
		if deleteWithSet(set) {
			claim.OwnerReferences = []metav1.OwnerReference{setClaimRef(set)}
		}
		_, err := c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Create(ctx, claim, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			c.recorder.Eventf(set, corev1.EventTypeWarning, "FailedCreate", "create Claim %s for Pod %s in StatefulSet %s failed error: %v", name, pod.Name, set.Name, err)
			return nil, fmt.Errorf("create claim %s: %w", name, err)
		}
		if err == nil {
			c.recorder.Eventf(set, corev1.EventTypeNormal, "SuccessfulCreate", "create Claim %s Pod %s in StatefulSet %s success", name, pod.Name, set.Name)
		}
	}
	created, err := c.client.CoreV1().Pods(set.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return pod, nil
	}
	if err != nil {
		c.recorder.Eventf(set, corev1.EventTypeWarning, "FailedCreate", "create Pod %s in StatefulSet %s failed error: %v", pod.Name, set.Name, err)
		return nil, fmt.Errorf("create pod %s: %w", pod.Name, err)
	}
	c.recorder.Eventf(set, corev1.EventTypeNormal, "SuccessfulCreate", "create Pod %s in StatefulSet %s successful", pod.Name, set.Name)
	return created, nil
}

func deleteWithSet(set *appsv1.StatefulSet) bool {
	p := set.Spec.PersistentVolumeClaimRetentionPolicy
	return p != nil && p.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType
}

func deleteOnScaleDown(set *appsv1.StatefulSet) bool {
	p := set.Spec.PersistentVolumeClaimRetentionPolicy
	return p != nil && p.WhenScaled == appsv1.DeletePersistentVolumeClaimRetentionPolicyType
}

// setClaimRef is the (non-controller) owner reference that lets the
// garbage collector delete a claim with its StatefulSet.
func setClaimRef(set *appsv1.StatefulSet) metav1.OwnerReference {
	r := ownership.Ref(set, Kind)
	r.Controller, r.BlockOwnerDeletion = nil, nil
	return r
}

// ensureClaimOwners makes the owner references of pod's claims follow the
// retention policy: the set owns them when whenDeleted is Delete, and a
// condemned pod owns them when whenScaled is Delete.
func (c *Controller) ensureClaimOwners(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod, ord int, condemned bool) error {
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		claim, err := c.claims.PersistentVolumeClaims(set.Namespace).Get(claimName(t, set, ord))
		if err != nil {
			continue
		}
		refs := slices.DeleteFunc(slices.Clone(claim.OwnerReferences), func(r metav1.OwnerReference) bool {
			return r.UID == set.UID || r.UID == pod.UID || (r.Kind == "StatefulSet" && r.Name == set.Name) || (r.Kind == "Pod" && r.Name == pod.Name)
		})
		if deleteWithSet(set) {
			refs = append(refs, setClaimRef(set))
		}
		if condemned && deleteOnScaleDown(set) {
			refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID})
		}
		if len(refs) == 0 {
			refs = nil
		}
		if apiequality.Semantic.DeepEqual(refs, claim.OwnerReferences) || len(refs) == 0 && len(claim.OwnerReferences) == 0 {
			continue
		}
		upd := claim.DeepCopy()
		upd.OwnerReferences = refs
		if _, err := c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Update(ctx, upd, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("update owners of claim %s: %w", claim.Name, err)
		}
	}
	return nil
}

// truncateHistory deletes revisions no pod uses beyond revisionHistoryLimit.
func (c *Controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, mine []*corev1.Pod, revs []*appsv1.ControllerRevision, status appsv1.StatefulSetStatus) error {
	live := map[string]bool{status.CurrentRevision: true, status.UpdateRevision: true}
	for _, p := range mine {
		live[revisionOf(p)] = true
	}
	return history.Truncate(ctx, c.client, revs, live, ptr.Deref(set.Spec.RevisionHistoryLimit, 10))
}
