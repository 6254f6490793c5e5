// Package replicaset is the controller that keeps a ReplicaSet's count of
// pods: it claims the pods its selector matches, creates missing ones in
// slow-start batches, deletes surplus ones in upstream's preference order
// and reports replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas and the ReplicaFailure condition. The
// replicationcontroller package runs the same controller over
// ReplicationControllers through a Source.
package replicaset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/expectations"
	"trireme.dev/controller-manager/internal/ownership"
	"trireme.dev/controller-manager/internal/pods"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "replicaset"

// BurstReplicas caps the pods created or deleted in one sync, as upstream.
const BurstReplicas = 500

// Source is the kind of object the controller keeps, seen as ReplicaSets.
type Source interface {
	// Kind is the owner kind written into pods' owner references.
	Kind() schema.GroupVersionKind
	// Informer delivers the objects; Convert turns one into a ReplicaSet.
	Informer() cache.SharedIndexInformer
	Convert(obj any) (*appsv1.ReplicaSet, bool)
	// Get and List read the informer cache.
	Get(namespace, name string) (*appsv1.ReplicaSet, error)
	List(namespace string) ([]*appsv1.ReplicaSet, error)
	// GetFresh reads the object from the API, for adoption checks.
	GetFresh(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error)
	// UpdateStatus writes rs's status to its object.
	UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error)
	// Original is the object events are recorded on.
	Original(rs *appsv1.ReplicaSet) runtime.Object
}

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Name is the controller's name in its logs, queue and metrics; ""
	// means Name ("replicaset").
	Name string
	// Client creates, deletes and patches pods.
	Client kubernetes.Interface
	// Source is the kind of object kept: NewReplicaSets for ReplicaSets.
	// New registers its handlers on Source's informer.
	Source Source
	// Pods is the shared pod informer; New registers its handlers.
	Pods coreinformers.PodInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the ReplicaSet (or ReplicationController) controller.
type Controller struct {
	name     string
	client   kubernetes.Interface
	recorder record.EventRecorder
	source   Source
	pods     corelisters.PodLister
	exp      *expectations.Store
	loop     *worker.Loop
	synced   []cache.InformerSynced
	now      func() time.Time
}

// New returns the controller keeping the objects of o.Source.
func New(o Options) (*Controller, error) {
	if o.Name == "" {
		o.Name = Name
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		name: o.Name, client: o.Client, recorder: o.Recorder, source: o.Source,
		pods:   o.Pods.Lister(),
		exp:    expectations.New(),
		synced: []cache.InformerSynced{o.Source.Informer().HasSynced, o.Pods.Informer().HasSynced},
		now:    o.Now,
	}
	c.loop = worker.New(o.Name, c.sync)
	if _, err := o.Source.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: func(obj any) {
			if rs, ok := c.source.Convert(obj); ok {
				c.exp.Delete(rs.Namespace + "/" + rs.Name)
			}
			c.loop.AddObject(obj)
		},
	}); err != nil {
		return nil, fmt.Errorf("watch %s: %w", o.Source.Kind().Kind, err)
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) owner(pod *corev1.Pod, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref == nil || ref.Kind != c.source.Kind().Kind || ref.APIVersion != c.source.Kind().GroupVersion().String() {
		return nil
	}
	rs, err := c.source.Get(pod.Namespace, ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	return rs
}

func (c *Controller) enqueueMatching(pod *corev1.Pod) {
	list, err := c.source.List(pod.Namespace)
	if err != nil {
		return
	}
	for _, rs := range list {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		c.loop.Add(rs.Namespace + "/" + rs.Name)
	}
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		c.deletePod(pod)
		return
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if rs := c.owner(pod, ref); rs != nil {
			key := rs.Namespace + "/" + rs.Name
			c.exp.CreationObserved(key)
			c.loop.Add(key)
		}
		return
	}
	c.enqueueMatching(pod)
}

func (c *Controller) updatePod(oldObj, newObj any) {
	oldPod, pod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	if oldPod.ResourceVersion == pod.ResourceVersion {
		return
	}
	if pod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
		// A pod going away no longer counts; its final deletion may come
		// much later.
		c.deletePod(pod)
		return
	}
	oldRef, ref := metav1.GetControllerOf(oldPod), metav1.GetControllerOf(pod)
	if oldRef != nil && (ref == nil || oldRef.UID != ref.UID) {
		if rs := c.owner(oldPod, oldRef); rs != nil {
			c.loop.Add(rs.Namespace + "/" + rs.Name)
		}
	}
	if ref != nil {
		if rs := c.owner(pod, ref); rs != nil {
			key := rs.Namespace + "/" + rs.Name
			c.loop.Add(key)
			// A pod just became ready becomes available minReadySeconds
			// later, when nothing else will make us look again.
			if !pods.Ready(oldPod) && pods.Ready(pod) && rs.Spec.MinReadySeconds > 0 {
				c.loop.AddAfter(key, time.Duration(rs.Spec.MinReadySeconds)*time.Second+time.Second)
			}
		}
		return
	}
	if !labels.Equals(oldPod.Labels, pod.Labels) || oldRef != nil {
		c.enqueueMatching(pod)
	}
}

func (c *Controller) deletePod(obj any) {
	pod, ok := worker.ObjectAs[*corev1.Pod](obj)
	if !ok {
		return
	}
	rs := c.owner(pod, metav1.GetControllerOf(pod))
	if rs == nil {
		return
	}
	key := rs.Namespace + "/" + rs.Name
	c.exp.DeletionObserved(key, pods.Key(pod))
	c.loop.Add(key)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	rs, err := c.source.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		c.exp.Delete(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", c.source.Kind().Kind, key, err)
	}
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || selector.Empty() {
		c.recorder.Eventf(c.source.Original(rs), corev1.EventTypeWarning, "InvalidSelector", "Invalid selector: %v", err)
		return nil
	}
	needsSync := c.exp.Satisfied(key)
	all, err := c.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	claimer := &ownership.Claimer{
		Owner: rs, Kind: c.source.Kind(), Selector: selector,
		Patch: c.patchPod,
		CanAdopt: ownership.RecheckOwner(rs.UID, func(ctx context.Context) (metav1.Object, error) {
			return c.source.GetFresh(ctx, namespace, name)
		}),
	}
	mine, err := ownership.Claim(ctx, claimer, pods.FilterActive(all))
	if err != nil {
		return fmt.Errorf("claim pods of %s: %w", key, err)
	}
	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = c.manage(ctx, rs, key, mine, all)
	}
	status := c.status(rs, mine, manageErr)
	updated, err := c.updateStatus(ctx, rs, status)
	if err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && updated.Spec.MinReadySeconds > 0 && updated.Status.ReadyReplicas == replicas(updated) &&
		updated.Status.AvailableReplicas != replicas(updated) {
		c.loop.AddAfter(key, time.Duration(updated.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

func replicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func (c *Controller) patchPod(ctx context.Context, namespace, name string, patch []byte) error {
	_, err := c.client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// manage creates or deletes pods so that mine has the wanted count.
func (c *Controller) manage(ctx context.Context, rs *appsv1.ReplicaSet, key string, mine, all []*corev1.Pod) error {
	diff := len(mine) - int(replicas(rs))
	orig := c.source.Original(rs)
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		c.exp.ExpectCreations(key, n)
		ref := ownership.Ref(rs, c.source.Kind())
		ok, err := pods.SlowStartBatch(n, 1, func(int) error {
			pod := pods.FromTemplate(&rs.Spec.Template, rs.Name, &ref)
			created, err := c.client.CoreV1().Pods(rs.Namespace).Create(ctx, pod, metav1.CreateOptions{})
			if err != nil {
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				c.recorder.Eventf(orig, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
				return err
			}
			c.recorder.Eventf(orig, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", created.Name)
			return nil
		})
		// Creations never attempted or failed will never be observed.
		for range n - ok {
			c.exp.CreationObserved(key)
		}
		if err != nil {
			return fmt.Errorf("create pods for %s: %w", key, err)
		}
	case diff > 0:
		n := min(diff, BurstReplicas)
		victims := c.pickVictims(rs, mine, all, n)
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = pods.Key(p)
		}
		c.exp.ExpectDeletions(key, keys)
		errs := make(chan error, len(victims))
		_, _ = pods.SlowStartBatch(len(victims), len(victims), func(i int) error {
			p := victims[i]
			err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				c.exp.DeletionObserved(key, pods.Key(p))
				c.recorder.Eventf(orig, corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
				errs <- err
				return nil
			}
			if err != nil {
				c.exp.DeletionObserved(key, pods.Key(p))
				return nil
			}
			c.recorder.Eventf(orig, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Name)
			return nil
		})
		close(errs)
		if err := <-errs; err != nil {
			return fmt.Errorf("delete pods of %s: %w", key, err)
		}
	}
	return nil
}

// pickVictims ranks mine for deletion; pods of the same owner's other
// ReplicaSets count as doubling up a node, as upstream's related pods.
func (c *Controller) pickVictims(rs *appsv1.ReplicaSet, mine, all []*corev1.Pod, n int) []*corev1.Pod {
	related := mine
	if owner := metav1.GetControllerOf(rs); owner != nil {
		siblings := map[types.UID]bool{rs.UID: true}
		if list, err := c.source.List(rs.Namespace); err == nil {
			for _, o := range list {
				if r := metav1.GetControllerOf(o); r != nil && r.UID == owner.UID {
					siblings[o.UID] = true
				}
			}
		}
		related = nil
		for _, p := range all {
			if r := metav1.GetControllerOf(p); r != nil && siblings[r.UID] {
				related = append(related, p)
			}
		}
	}
	ranked := append([]*corev1.Pod(nil), mine...)
	pods.RankForDeletion(ranked, related, c.now())
	return ranked[:n]
}

// status computes rs's status from its pods and the outcome of manage.
func (c *Controller) status(rs *appsv1.ReplicaSet, mine []*corev1.Pod, manageErr error) appsv1.ReplicaSetStatus {
	s := *rs.Status.DeepCopy()
	templateLabels := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	var fully, ready, available int32
	now := c.now()
	for _, p := range mine {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			fully++
		}
		if pods.Ready(p) {
			ready++
			if pods.Available(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	s.Replicas = int32(len(mine))
	s.FullyLabeledReplicas = fully
	s.ReadyReplicas = ready
	s.AvailableReplicas = available
	s.ObservedGeneration = rs.Generation
	failure := conditionIndex(s.Conditions, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure < 0:
		reason := "FailedCreate"
		if len(mine) > int(replicas(rs)) {
			reason = "FailedDelete"
		}
		s.Conditions = append(s.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failure >= 0:
		s.Conditions = append(s.Conditions[:failure:failure], s.Conditions[failure+1:]...)
	}
	return s
}

func conditionIndex(conds []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}

// updateStatus writes status unless it is already there, retrying once on
// a conflict with a fresh copy.
func (c *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, status appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	if apiequality.Semantic.DeepEqual(rs.Status, status) {
		return rs, nil
	}
	for attempt := 0; ; attempt++ {
		upd := rs.DeepCopy()
		upd.Status = status
		got, err := c.source.UpdateStatus(ctx, upd)
		if err == nil {
			return got, nil
		}
		if attempt > 0 || !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("update status of %s/%s: %w", rs.Namespace, rs.Name, err)
		}
		fresh, gerr := c.source.GetFresh(ctx, rs.Namespace, rs.Name)
		if gerr != nil {
			return nil, fmt.Errorf("update status of %s/%s: %w", rs.Namespace, rs.Name, gerr)
		}
		status.ObservedGeneration = fresh.Generation
		rs = fresh
	}
}
