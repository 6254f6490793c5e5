// Package resourcequota is the controller that keeps every ResourceQuota's
// status current: status.hard mirrors spec.hard, and status.used is the
// namespace's usage of each named resource, recalculated whenever objects
// that count change and in full every sync period. ResourceQuota admission
// refuses requests charged to a quota until its status is filled, and
// charges what it admits: a recalculation for creations only raises the
// count, never lowering what admission charged ahead of the cache.
package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "resourcequota"

// pendingRetry is how soon a quota is synced again while the informer of a
// resource it counts is still filling.
const pendingRetry = time.Second

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes ResourceQuota status.
	Client kubernetes.Interface
	// Quotas, Pods, Services and Claims are the shared informers; New
	// registers its handlers on all four.
	Quotas   coreinformers.ResourceQuotaInformer
	Pods     coreinformers.PodInformer
	Services coreinformers.ServiceInformer
	Claims   coreinformers.PersistentVolumeClaimInformer
	// Metadata and Resolver serve count/<resource>.<group>.
	Metadata metadatainformer.SharedInformerFactory
	Resolver Resolver
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// SyncPeriod is how often every quota is recalculated in full, which
	// catches anything an event missed (--resource-quota-sync-period);
	// it has no default: New refuses one that is not positive.
	SyncPeriod time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller fills ResourceQuota status. Its queue holds namespace/name keys
// of quotas.
type Controller struct {
	o        Options
	quotas   corelisters.ResourceQuotaLister
	pods     corelisters.PodLister
	services corelisters.ServiceLister
	claims   corelisters.PersistentVolumeClaimLister
	counter  *counter
	synced   []cache.InformerSynced
	loop     *worker.Loop

	// mayLower holds the keys of quotas queued for a change that can free
	// usage (a deletion, an update, a new spec, the periodic sync). A sync
	// for creations alone only raises status.used: admission charged
	// them already, and the cache may not yet hold other objects it
	// charged, so a lower count from it would let the next ones past the
	// quota.
	mu       sync.Mutex
	mayLower map[string]bool
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SyncPeriod <= 0 {
		return nil, fmt.Errorf("%s: sync period must be positive, got %v", Name, o.SyncPeriod)
	}
	c := &Controller{
		o:        o,
		quotas:   o.Quotas.Lister(),
		pods:     o.Pods.Lister(),
		services: o.Services.Lister(),
		claims:   o.Claims.Lister(),
		mayLower: map[string]bool{},
		synced: []cache.InformerSynced{
			o.Quotas.Informer().HasSynced, o.Pods.Informer().HasSynced,
			o.Services.Informer().HasSynced, o.Claims.Informer().HasSynced,
		},
	}
	c.loop = worker.New(Name, c.sync)
	c.counter = &counter{factory: o.Metadata, resolver: o.Resolver, onChange: c.enqueueNamespace, now: o.Now}
	created := func(obj any) { c.enqueueObjectNamespace(obj, false) }
	changed := func(obj any) { c.enqueueObjectNamespace(obj, true) }

	handlers := []struct {
		informer cache.SharedIndexInformer
		funcs    cache.ResourceEventHandlerFuncs
	}{
		{o.Quotas.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.enqueueQuota,
			// Status written by admission or by this controller is no
			// reason to count again; a new spec is.
			UpdateFunc: func(oldObj, obj any) {
				old, ok1 := oldObj.(*corev1.ResourceQuota)
				cur, ok2 := obj.(*corev1.ResourceQuota)
				if !ok1 || !ok2 || !equality.Semantic.DeepEqual(old.Spec, cur.Spec) || !equalLists(cur.Spec.Hard, cur.Status.Hard) {
					c.enqueueQuota(obj)
				}
			},
		}},
		{o.Pods.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    created,
			UpdateFunc: c.podUpdated,
			DeleteFunc: changed,
		}},
		{o.Services.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: created, UpdateFunc: func(_, obj any) { changed(obj) }, DeleteFunc: changed}},
		{o.Claims.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: created, UpdateFunc: func(_, obj any) { changed(obj) }, DeleteFunc: changed}},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.funcs); err != nil {
			return nil, fmt.Errorf("%s: add event handler: %w", Name, err)
		}
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends, and queues every
// quota once per sync period.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.counter.run(ctx)
	go wait.UntilWithContext(ctx, func(context.Context) { c.enqueueAll() }, c.o.SyncPeriod)
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) enqueueAll() {
	quotas, err := c.quotas.List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range quotas {
		c.enqueue(q.Namespace+"/"+q.Name, true)
	}
}

// enqueue queues a quota's key; lower says the change may free usage.
func (c *Controller) enqueue(key string, lower bool) {
	if lower {
		c.mu.Lock()
		c.mayLower[key] = true
		c.mu.Unlock()
	}
	c.loop.Add(key)
}

// takeLower reports whether the quota's sync may lower status.used, and
// clears that until a change that frees usage queues it again.
func (c *Controller) takeLower(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	lower := c.mayLower[key]
	delete(c.mayLower, key)
	return lower
}

func (c *Controller) enqueueQuota(obj any) {
	if q, ok := worker.ObjectAs[*corev1.ResourceQuota](obj); ok {
		c.enqueue(q.Namespace+"/"+q.Name, true)
	}
}

// enqueueNamespace queues the quotas of namespace; lower says the change
// may free usage.
func (c *Controller) enqueueNamespace(namespace string, lower bool) {
	quotas, err := c.quotas.ResourceQuotas(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range quotas {
		c.enqueue(q.Namespace+"/"+q.Name, lower)
	}
}

func (c *Controller) enqueueObjectNamespace(obj any, lower bool) {
	if m, ok := worker.ObjectAs[metav1.Object](obj); ok {
		c.enqueueNamespace(m.GetNamespace(), lower)
	}
}

// podUpdated recalculates only when the update changes what the pod is
// charged: status updates from the kubelet are frequent and mostly do not.
func (c *Controller) podUpdated(oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*corev1.Pod)
	newPod, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	now := c.o.Now()
	if podCharged(oldPod, now) != podCharged(newPod, now) ||
		!equalLists(podUsage(oldPod), podUsage(newPod)) ||
		bestEffort(oldPod) != bestEffort(newPod) ||
		!equality.Semantic.DeepEqual(oldPod.DeletionTimestamp, newPod.DeletionTimestamp) {
		c.enqueueNamespace(newPod.Namespace, true)
	}
}

// sync writes the quota's status when hard or used changed.
func (c *Controller) sync(ctx context.Context, key string) (err error) {
	lower := c.takeLower(key)
	defer func() {
		if err != nil && lower {
			c.enqueue(key, true)
		}
	}()
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("bad key %q: %w", key, err)
	}
	quota, err := c.quotas.ResourceQuotas(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get resourcequota %s: %w", key, err)
	}
	used, pending, calcErr := c.usage(quota)
	if !lower && quota.Status.Used != nil {
		for name, q := range used {
			if charged, ok := quota.Status.Used[name]; ok && charged.Cmp(q) > 0 {
				used[name] = charged.DeepCopy()
			}
		}
	}
	hard := quota.Spec.Hard.DeepCopy()
	if hard == nil {
		hard = corev1.ResourceList{}
	}
	if quota.Status.Hard != nil && quota.Status.Used != nil &&
		equalLists(hard, quota.Status.Hard) && equalLists(used, quota.Status.Used) {
		if pending {
			c.loop.AddAfter(key, pendingRetry)
		}
		return calcErr
	}
	updated := quota.DeepCopy()
	updated.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	if _, err := c.o.Client.CoreV1().ResourceQuotas(namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			c.o.Recorder.Eventf(quota, corev1.EventTypeWarning, "FailedUpdateStatus", "Error updating quota usage: %v", err)
		}
		return errors.Join(calcErr, fmt.Errorf("update resourcequota %s status: %w", key, err))
	}
	if pending {
		c.loop.AddAfter(key, pendingRetry)
	}
	return calcErr
}

// usage computes status.used for every resource named in spec.hard that
// quota knows how to count. Names whose count is not ready yet keep their
// previous value and set pending; names nothing can count are left out.
func (c *Controller) usage(quota *corev1.ResourceQuota) (used corev1.ResourceList, pending bool, err error) {
	reqs := scopeRequirements(quota)
	used = corev1.ResourceList{}
	var (
		pods, services, claims corev1.ResourceList
		errs                   []error
	)
	for name := range quota.Spec.Hard {
		fam, gr := classify(name)
		var total corev1.ResourceList
		switch fam {
		case familyPods:
			if pods == nil {
				if pods, err = c.podTotals(quota.Namespace, reqs); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			total = pods
		case familyServices:
			if services == nil {
				if services, err = c.serviceTotals(quota.Namespace, reqs); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			total = services
		case familyClaims:
			if claims == nil {
				if claims, err = c.claimTotals(quota.Namespace, reqs); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			total = claims
		case familyCount:
			if len(reqs) > 0 {
				// Scopes select pods and claims only; a scoped quota counts
				// no other object.
				total = corev1.ResourceList{}
				break
			}
			n, ready, err := c.counter.count(gr, quota.Namespace)
			if errors.Is(err, errUnknownResource) {
				continue
			}
			if err != nil || !ready {
				if err != nil {
					errs = append(errs, err)
				}
				pending = pending || err == nil
				if prev, ok := quota.Status.Used[name]; ok {
					used[name] = prev
				}
				continue
			}
			total = corev1.ResourceList{name: *resourceQuantity(n)}
		default:
			continue
		}
		q, ok := total[name]
		if !ok {
			q = *resourceQuantity(0)
		}
		used[name] = q
	}
	return used, pending, errors.Join(errs...)
}

func (c *Controller) podTotals(namespace string, reqs []corev1.ScopedResourceSelectorRequirement) (corev1.ResourceList, error) {
	pods, err := c.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list pods in %s: %w", namespace, err)
	}
	now := c.o.Now()
	total := corev1.ResourceList{}
	for _, p := range pods {
		if podCharged(p, now) && podMatches(p, reqs) {
			add(total, podUsage(p))
		}
	}
	return total, nil
}

func (c *Controller) serviceTotals(namespace string, reqs []corev1.ScopedResourceSelectorRequirement) (corev1.ResourceList, error) {
	total := corev1.ResourceList{}
	if len(reqs) > 0 {
		return total, nil
	}
	services, err := c.services.Services(namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list services in %s: %w", namespace, err)
	}
	for _, s := range services {
		add(total, serviceUsage(s))
	}
	return total, nil
}

func (c *Controller) claimTotals(namespace string, reqs []corev1.ScopedResourceSelectorRequirement) (corev1.ResourceList, error) {
	claims, err := c.claims.PersistentVolumeClaims(namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list persistentvolumeclaims in %s: %w", namespace, err)
	}
	total := corev1.ResourceList{}
	for _, pvc := range claims {
		if claimMatches(pvc, reqs) {
			add(total, claimUsage(pvc))
		}
	}
	return total, nil
}
