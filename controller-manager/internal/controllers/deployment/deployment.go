// Package deployment is the controller that rolls Deployments out through
// ReplicaSets: one ReplicaSet per pod template, named by the template's
// hash, scaled by the RollingUpdate (maxSurge, maxUnavailable,
// minReadySeconds) or Recreate strategy, numbered by the
// deployment.kubernetes.io/revision annotation so `kubectl rollout
// history/undo` work, with upstream's Progressing and Available conditions.
package deployment

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/ownership"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "deployment"

// Kind is the Deployment kind.
var Kind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes ReplicaSets and Deployment status.
	Client kubernetes.Interface
	// Deployments, ReplicaSets and Pods are the shared informers; New
	// registers its handlers on all three.
	Deployments appsinformers.DeploymentInformer
	ReplicaSets appsinformers.ReplicaSetInformer
	Pods        coreinformers.PodInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the deployment controller.
type Controller struct {
	client      kubernetes.Interface
	recorder    record.EventRecorder
	deployments appslisters.DeploymentLister
	rss         appslisters.ReplicaSetLister
	pods        corelisters.PodLister
	loop        *worker.Loop
	synced      []cache.InformerSynced
	now         func() time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		deployments: o.Deployments.Lister(), rss: o.ReplicaSets.Lister(), pods: o.Pods.Lister(),
		synced: []cache.InformerSynced{o.Deployments.Informer().HasSynced, o.ReplicaSets.Informer().HasSynced, o.Pods.Informer().HasSynced},
		now:    o.Now,
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Deployments.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}); err != nil {
		return nil, fmt.Errorf("watch deployments: %w", err)
	}
	if _, err := o.ReplicaSets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.replicaSetChanged,
		UpdateFunc: func(oldObj, obj any) { c.replicaSetChanged(oldObj); c.replicaSetChanged(obj) },
		DeleteFunc: c.replicaSetChanged,
	}); err != nil {
		return nil, fmt.Errorf("watch replicasets: %w", err)
	}
	// Recreate waits for the old pods to be gone, which only pod deletions
	// announce.
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.podDeleted,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) replicaSetChanged(obj any) {
	rs, ok := worker.ObjectAs[*appsv1.ReplicaSet](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOf(rs); ref != nil {
		if ref.Kind == Kind.Kind {
			c.loop.Add(rs.Namespace + "/" + ref.Name)
		}
		return
	}
	list, err := c.deployments.Deployments(rs.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, d := range list {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(rs.Labels)) {
			c.loop.Add(d.Namespace + "/" + d.Name)
		}
	}
}

func (c *Controller) podDeleted(obj any) {
	pod, ok := worker.ObjectAs[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, err := c.rss.ReplicaSets(pod.Namespace).Get(ref.Name)
	if err != nil {
		return
	}
	if dref := metav1.GetControllerOf(rs); dref != nil && dref.Kind == Kind.Kind {
		c.loop.Add(rs.Namespace + "/" + dref.Name)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.deployments.Deployments(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get deployment %s: %w", key, err)
	}
	d := cached.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || selector.Empty() {
		c.recorder.Eventf(d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			_, _ = c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		}
		return nil
	}
	if !selector.Matches(labels.Set(d.Spec.Template.Labels)) {
		// The apiserver refuses this; one written before validation
		// tightened, or by a lax server, must not stop the others.
		c.recorder.Eventf(d, corev1.EventTypeWarning, "SelectorMismatch", "Selector %s does not match template labels", selector)
		return nil
	}
	rsList, err := c.claimReplicaSets(ctx, d, selector)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return c.syncStatusOnly(ctx, d, rsList)
	}
	if err := c.checkPaused(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return c.syncScale(ctx, d, rsList)
	}
	if c.isScalingEvent(d, rsList) {
		return c.syncScale(ctx, d, rsList)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return c.rolloutRecreate(ctx, d, rsList)
	}
	return c.rolloutRolling(ctx, d, rsList)
}

func (c *Controller) claimReplicaSets(ctx context.Context, d *appsv1.Deployment, selector labels.Selector) ([]*appsv1.ReplicaSet, error) {
	all, err := c.rss.ReplicaSets(d.Namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list replicasets: %w", err)
	}
	claimer := &ownership.Claimer{
		Owner: d, Kind: Kind, Selector: selector,
		Patch: func(ctx context.Context, ns, name string, patch []byte) error {
			_, err := c.client.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		},
		CanAdopt: ownership.RecheckOwner(d.UID, func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		}),
	}
	list, err := ownership.Claim(ctx, claimer, all)
	if err != nil {
		return nil, fmt.Errorf("claim replicasets of %s/%s: %w", d.Namespace, d.Name, err)
	}
	// The cache's objects are shared; everything below may change them.
	for i := range list {
		list[i] = list[i].DeepCopy()
	}
	return list, nil
}

// checkPaused keeps the Progressing condition saying whether the
// Deployment is paused, so a paused rollout does not time out.
func (c *Controller) checkPaused(ctx context.Context, d *appsv1.Deployment) error {
	if d.Spec.ProgressDeadlineSeconds == nil {
		return nil
	}
	cond := getCondition(d.Status, appsv1.DeploymentProgressing)
	pausedCond := cond != nil && cond.Reason == PausedReason
	var changed bool
	switch {
	case d.Spec.Paused && !pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, PausedReason, "Deployment is paused", c.now()))
		changed = true
	case !d.Spec.Paused && pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ResumedReason, "Deployment is resumed", c.now()))
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

// isScalingEvent reports whether the Deployment's replicas changed since
// its active ReplicaSets were sized.
func (c *Controller) isScalingEvent(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) bool {
	newRS, oldRSs := findNewAndOld(d, rsList)
	for _, rs := range activeReplicaSets(append(oldRSs, newRS)) {
		desired, ok := desiredReplicasAnnotation(rs)
		if ok && desired != replicas(d) {
			return true
		}
	}
	return false
}
