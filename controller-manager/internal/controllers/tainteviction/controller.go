// Package tainteviction is the controller that evicts pods from nodes with
// NoExecute taints: at once when a pod does not tolerate every such taint,
// otherwise when the shortest tolerationSeconds of the tolerations it uses
// has passed since the taint was added.
package tainteviction

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/metrics"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "taint-eviction-controller"

// podsByNode indexes pods by spec.nodeName.
const podsByNode = "tainteviction/nodeName"

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client deletes pods and writes their DisruptionTarget condition.
	Client kubernetes.Interface
	// Nodes and Pods are the shared informers; New registers its handlers
	// on both and indexes pods by node.
	Nodes coreinformers.NodeInformer
	Pods  coreinformers.PodInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller evicts pods for NoExecute taints. Its queue holds pod keys.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	nodes    corelisters.NodeLister
	pods     corelisters.PodLister
	podIndex cache.Indexer
	synced   []cache.InformerSynced
	loop     *worker.Loop
	now      func() time.Time

	// firstSeen is when the controller first saw a pod on a tainted node,
	// for taints that carry no TimeAdded.
	mu        sync.Mutex
	firstSeen map[string]time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder, now: o.Now,
		nodes:     o.Nodes.Lister(),
		pods:      o.Pods.Lister(),
		podIndex:  o.Pods.Informer().GetIndexer(),
		synced:    []cache.InformerSynced{o.Nodes.Informer().HasSynced, o.Pods.Informer().HasSynced},
		firstSeen: map[string]time.Time{},
	}
	c.loop = worker.New(Name, c.sync)
	if err := o.Pods.Informer().AddIndexers(cache.Indexers{podsByNode: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, fmt.Errorf("index pods by node: %w", err)
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	if _, err := o.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.nodeChanged,
		UpdateFunc: func(oldObj, obj any) {
			old, ok1 := oldObj.(*corev1.Node)
			n, ok2 := obj.(*corev1.Node)
			if ok1 && ok2 && sameNoExecute(old.Spec.Taints, n.Spec.Taints) {
				return
			}
			c.nodeChanged(obj)
		},
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return c, nil
}

// Run evicts with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) nodeChanged(obj any) {
	node, ok := worker.ObjectAs[*corev1.Node](obj)
	if !ok {
		return
	}
	objs, _ := c.podIndex.ByIndex(podsByNode, node.Name)
	for _, o := range objs {
		c.loop.AddObject(o)
	}
}

// sync evicts the pod now, schedules a look when its toleration runs out,
// or does nothing when its node has no NoExecute taint.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", key, err)
	}
	if pod.DeletionTimestamp != nil || pod.Spec.NodeName == "" {
		c.forget(key)
		return nil
	}
	node, err := c.nodes.Get(pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		// The pod GC removes pods of deleted nodes.
		c.forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", pod.Spec.NodeName, err)
	}
	taints := noExecuteTaints(node.Spec.Taints)
	if len(taints) == 0 {
		c.forget(key)
		return nil
	}
	now := c.now()
	c.mu.Lock()
	seen, ok := c.firstSeen[key]
	if !ok {
		seen = now
		c.firstSeen[key] = now
	}
	c.mu.Unlock()
	at, ok := EvictionTime(pod.Spec.Tolerations, taints, seen)
	if !ok {
		return nil // tolerated forever
	}
	if wait := at.Sub(now); wait > 0 {
		c.loop.AddAfter(key, wait)
		return nil
	}
	return c.evict(ctx, pod)
}

func (c *Controller) forget(key string) {
	c.mu.Lock()
	delete(c.firstSeen, key)
	c.mu.Unlock()
}

// evict marks the pod with a DisruptionTarget condition, as upstream, so
// that its owner can tell why it went, and deletes it.
func (c *Controller) evict(ctx context.Context, pod *corev1.Pod) error {
	logr.FromContextOrDiscard(ctx).Info("Evicting pod for a NoExecute taint", "pod", pod.Namespace+"/"+pod.Name, "node", pod.Spec.NodeName)
	c.recorder.Eventf(pod, corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s/%s", pod.Namespace, pod.Name)
	updated := pod.DeepCopy()
	cond := corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason:             "DeletionByTaintManager",
		Message:            "Taint manager: deleting due to NoExecute taint",
		LastTransitionTime: metav1.NewTime(c.now()),
	}
	replaced := false
	for i := range updated.Status.Conditions {
		if updated.Status.Conditions[i].Type == corev1.DisruptionTarget {
			updated.Status.Conditions[i], replaced = cond, true
		}
	}
	if !replaced {
		updated.Status.Conditions = append(updated.Status.Conditions, cond)
	}
	if _, err := c.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("mark pod %s/%s for eviction: %w", pod.Namespace, pod.Name, err)
	}
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if err == nil {
		metrics.TaintEviction()
	}
	return nil
}

func noExecuteTaints(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

func sameNoExecute(a, b []corev1.Taint) bool {
	x, y := noExecuteTaints(a), noExecuteTaints(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !x[i].MatchTaint(&y[i]) {
			return false
		}
	}
	return true
}

// EvictionTime is when a pod with tolerations must leave a node with the
// NoExecute taints: now-ish (the zero time) when one is not tolerated;
// otherwise the earliest, over the taints, of the taint's TimeAdded (or
// seen, when it has none) plus the tolerationSeconds of the toleration
// that tolerates it. ok is false when every taint is tolerated forever.
func EvictionTime(tolerations []corev1.Toleration, taints []corev1.Taint, seen time.Time) (at time.Time, ok bool) {
	for _, taint := range taints {
		var used *corev1.Toleration
		for i := range tolerations {
			if tolerations[i].ToleratesTaint(logr.Discard(), &taint, false) {
				used = &tolerations[i]
				break
			}
		}
		if used == nil {
			return time.Time{}, true
		}
		if used.TolerationSeconds == nil {
			continue
		}
		start := seen
		if taint.TimeAdded != nil {
			start = taint.TimeAdded.Time
		}
		d := time.Duration(max(*used.TolerationSeconds, 0)) * time.Second
		if t := start.Add(d); !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	return at, ok
}
