// Package ttlafterfinished is the controller that deletes finished Jobs
// once spec.ttlSecondsAfterFinished has passed since they completed or
// failed, with foreground propagation so their pods go first.
package ttlafterfinished

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "ttl-after-finished"

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client deletes the Jobs.
	Client kubernetes.Interface
	// Jobs is the shared Job informer; New registers its handlers.
	Jobs batchinformers.JobInformer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the TTL-after-finished controller.
type Controller struct {
	client kubernetes.Interface
	jobs   batchlisters.JobLister
	loop   *worker.Loop
	synced []cache.InformerSynced
	now    func() time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{client: o.Client, jobs: o.Jobs.Lister(), synced: []cache.InformerSynced{o.Jobs.Informer().HasSynced}, now: o.Now}
	c.loop = worker.New(Name, c.sync)
	enqueue := func(obj any) {
		if j, ok := obj.(*batchv1.Job); ok && j.DeletionTimestamp == nil && j.Spec.TTLSecondsAfterFinished != nil {
			if _, done := finishedAt(j); done {
				c.loop.AddObject(j)
			}
		}
	}
	if _, err := o.Jobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch jobs: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

// finishedAt is when j finished: its Complete or Failed condition's
// transition time.
func finishedAt(j *batchv1.Job) (time.Time, bool) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// expiresIn is how long until j may be deleted; ok is false when it never
// expires.
func expiresIn(j *batchv1.Job, now time.Time) (time.Duration, bool) {
	if j.DeletionTimestamp != nil || j.Spec.TTLSecondsAfterFinished == nil {
		return 0, false
	}
	at, done := finishedAt(j)
	if !done {
		return 0, false
	}
	return at.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second).Sub(now), true
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	j, err := c.jobs.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get job %s: %w", key, err)
	}
	left, ok := expiresIn(j, c.now())
	if !ok {
		return nil
	}
	if left > 0 {
		c.loop.AddAfter(key, left)
		return nil
	}
	// The TTL may have been changed since the cache saw the Job: check a
	// fresh copy before deleting anything.
	fresh, err := c.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get job %s: %w", key, err)
	}
	if left, ok := expiresIn(fresh, c.now()); !ok || left > 0 {
		if ok {
			c.loop.AddAfter(key, left)
		}
		return nil
	}
	err = c.client.BatchV1().Jobs(namespace).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
		Preconditions:     &metav1.Preconditions{UID: &fresh.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete expired job %s: %w", key, err)
	}
	return nil
}
