// Package nodelifecycle is the controller that notices nodes whose kubelet
// has gone quiet: once neither the node's Lease in kube-node-lease nor its
// Ready heartbeat has moved for the grace period, it sets the node's
// conditions to Unknown, taints it NoSchedule at once and NoExecute at a
// per-zone rate, and marks its pods not ready. The NoExecute taints are
// what the taint-eviction controller evicts pods for.
package nodelifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coordinationinformers "k8s.io/client-go/informers/coordination/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "nodelifecycle"

// LeaseNamespace holds the kubelets' heartbeat Leases, one per node, named
// after it.
const LeaseNamespace = corev1.NamespaceNodeLease

// evictionPeriod is how often the zone queues are offered to their rate
// limiters, as upstream.
const evictionPeriod = 100 * time.Millisecond

// podsByNode indexes pods by spec.nodeName.
const podsByNode = "nodelifecycle/nodeName"

// The defaults of the node lifecycle flags, as upstream.
const (
	DefaultMonitorPeriod          = 5 * time.Second
	DefaultMonitorGracePeriod     = 50 * time.Second
	DefaultStartupGracePeriod     = time.Minute
	DefaultUnhealthyZoneThreshold = 0.55
)

// Options configure the controller; the durations, rates and thresholds
// are kube-controller-manager's node lifecycle flags. Fields that name no
// default are required.
type Options struct {
	// Client writes node conditions and taints and pods' Ready condition.
	Client kubernetes.Interface
	// Nodes, Pods and Leases are the shared informers; New registers its
	// handlers on Nodes and indexes Pods by node.
	Nodes  coreinformers.NodeInformer
	Pods   coreinformers.PodInformer
	Leases coordinationinformers.LeaseInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder

	// MonitorPeriod is how often node health is checked
	// (--node-monitor-period); 0 means DefaultMonitorPeriod (5s).
	MonitorPeriod time.Duration
	// MonitorGracePeriod is how long a node may send no heartbeat before
	// it is marked Unknown (--node-monitor-grace-period); 0 means
	// DefaultMonitorGracePeriod (50s).
	MonitorGracePeriod time.Duration
	// StartupGracePeriod is that grace before a node's first Ready status
	// (--node-startup-grace-period); 0 means DefaultStartupGracePeriod
	// (1m).
	StartupGracePeriod time.Duration
	// EvictionRate is how many nodes a second a zone taints
	// NoExecute (--node-eviction-rate); 0 taints none.
	EvictionRate float32
	// SecondaryEvictionRate is that rate in a partially disrupted zone
	// larger than LargeClusterSizeThreshold
	// (--secondary-node-eviction-rate); 0 taints none.
	SecondaryEvictionRate float32
	// LargeClusterSizeThreshold is the zone size above which a partially
	// disrupted zone keeps evicting at SecondaryEvictionRate
	// (--large-cluster-size-threshold); 0 counts every zone as large.
	LargeClusterSizeThreshold int32
	// UnhealthyZoneThreshold is the fraction of not-ready nodes (at least
	// three) that makes a zone partially disrupted
	// (--unhealthy-zone-threshold); 0 means DefaultUnhealthyZoneThreshold.
	UnhealthyZoneThreshold float32

	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the node lifecycle controller. Its work queue holds node
// names whose NoSchedule taints to reconcile; the health monitor runs on
// its own ticker.
type Controller struct {
	opts     Options
	client   kubernetes.Interface
	recorder record.EventRecorder
	nodes    corelisters.NodeLister
	leases   coordinationlisters.LeaseLister
	pods     cache.Indexer
	synced   []cache.InformerSynced
	loop     *worker.Loop
	now      func() time.Time

	// mu guards the health and zone state, which the monitor and the
	// eviction ticker share.
	mu     sync.Mutex
	health map[string]*nodeHealth
	zones  *zones
	// retryNotReady holds nodes whose pods could not all be marked not
	// ready; the next pass tries again.
	retryNotReady map[string]bool
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.MonitorPeriod <= 0 {
		o.MonitorPeriod = DefaultMonitorPeriod
	}
	if o.MonitorGracePeriod <= 0 {
		o.MonitorGracePeriod = DefaultMonitorGracePeriod
	}
	if o.StartupGracePeriod <= 0 {
		o.StartupGracePeriod = DefaultStartupGracePeriod
	}
	if o.UnhealthyZoneThreshold <= 0 {
		o.UnhealthyZoneThreshold = DefaultUnhealthyZoneThreshold
	}
	c := &Controller{
		opts:     o,
		client:   o.Client,
		recorder: o.Recorder,
		nodes:    o.Nodes.Lister(),
		leases:   o.Leases.Lister(),
		pods:     o.Pods.Informer().GetIndexer(),
		now:      o.Now,
		health:   map[string]*nodeHealth{},

		retryNotReady: map[string]bool{},
		synced:        []cache.InformerSynced{o.Nodes.Informer().HasSynced, o.Pods.Informer().HasSynced, o.Leases.Informer().HasSynced},
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.zones = newZones(zoneRates{
		normal:       o.EvictionRate,
		secondary:    o.SecondaryEvictionRate,
		largeCluster: int(o.LargeClusterSizeThreshold),
		unhealthy:    o.UnhealthyZoneThreshold,
	})
	c.loop = worker.New(Name, c.syncNoScheduleTaints)
	if err := o.Pods.Informer().AddIndexers(cache.Indexers{podsByNode: indexByNode}); err != nil {
		return nil, fmt.Errorf("index pods by node: %w", err)
	}
	if _, err := o.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.nodeDeleted,
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return c, nil
}

func indexByNode(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{pod.Spec.NodeName}, nil
}

// Run monitors node health every MonitorPeriod and reconciles NoSchedule
// taints with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	log := logr.FromContextOrDiscard(ctx).WithValues("controller", Name)
	ctx = logr.NewContext(ctx, log)
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced...) {
		return
	}
	go c.every(ctx, c.opts.MonitorPeriod, func() {
		if err := c.monitor(ctx); err != nil {
			log.Error(err, "Monitoring node health failed")
		}
	})
	go c.every(ctx, evictionPeriod, func() { c.taintQueued(ctx) })
	c.loop.Run(ctx, workers)
}

func (c *Controller) every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		f()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *Controller) nodeDeleted(obj any) {
	node, ok := worker.ObjectAs[*corev1.Node](obj)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.health, node.Name)
	delete(c.retryNotReady, node.Name)
	c.zones.forget(node.Name)
}

// monitor is one pass over every node: health first, then the NoExecute
// taints each needs, then the zones' eviction rates.
func (c *Controller) monitor(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx)
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	byZone := map[string][]*corev1.NodeCondition{}
	for _, node := range nodes {
		observed, current, err := c.updateHealth(ctx, node)
		if err != nil {
			// One node's failed status write must not stop the others.
			log.Error(err, "Updating node health failed", "node", node.Name)
			continue
		}
		zone := zoneOf(node)
		byZone[zone] = append(byZone[zone], current)
		c.mu.Lock()
		c.zones.ensure(zone)
		c.mu.Unlock()
		if current == nil {
			continue
		}
		if err := c.processNoExecute(ctx, node, zone, current); err != nil {
			log.Error(err, "Updating NoExecute taints failed", "node", node.Name)
		}
		c.mu.Lock()
		retry := c.retryNotReady[node.Name]
		delete(c.retryNotReady, node.Name)
		c.mu.Unlock()
		becameNotReady := current.Status != corev1.ConditionTrue && (observed == nil || observed.Status == corev1.ConditionTrue)
		if becameNotReady {
			c.recorder.Eventf(node, corev1.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", node.Name)
		}
		if becameNotReady || (retry && current.Status != corev1.ConditionTrue) {
			if err := c.markPodsNotReady(ctx, node.Name); err != nil {
				log.Error(err, "Marking pods not ready failed; will retry", "node", node.Name)
				c.mu.Lock()
				c.retryNotReady[node.Name] = true
				c.mu.Unlock()
			}
		}
	}
	c.handleDisruption(ctx, byZone, nodes)
	return nil
}

// processNoExecute decides the node's NoExecute taint from its Ready
// condition: a swap between not-ready and unreachable happens at once, a
// new taint waits its turn in the zone's queue, a ready node loses both.
func (c *Controller) processNoExecute(ctx context.Context, node *corev1.Node, zone string, ready *corev1.NodeCondition) error {
	want := noExecuteKey(ready.Status)
	c.mu.Lock()
	defer c.mu.Unlock()
	if want == "" {
		c.zones.forget(node.Name)
		if hasTaint(node, corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute) || hasTaint(node, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute) {
			return c.setNoExecute(ctx, node.Name, "")
		}
		return nil
	}
	if hasTaint(node, want, corev1.TaintEffectNoExecute) {
		return nil
	}
	other := corev1.TaintNodeNotReady
	if want == other {
		other = corev1.TaintNodeUnreachable
	}
	if hasTaint(node, other, corev1.TaintEffectNoExecute) {
		return c.setNoExecute(ctx, node.Name, want)
	}
	c.zones.enqueue(zone, node.Name)
	return nil
}

// taintQueued taints the queued nodes each zone's rate limiter lets
// through.
func (c *Controller) taintQueued(ctx context.Context) {
	log := logr.FromContextOrDiscard(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.zones.drain(func(name string) bool {
		node, err := c.nodes.Get(name)
		if apierrors.IsNotFound(err) {
			return true
		}
		if err != nil {
			return false
		}
		ready := condition(node.Status.Conditions, corev1.NodeReady)
		if ready == nil {
			return true
		}
		if err := c.setNoExecute(ctx, name, noExecuteKey(ready.Status)); err != nil {
			log.Error(err, "Tainting node NoExecute failed; will retry", "node", name)
			return false
		}
		if key := noExecuteKey(ready.Status); key != "" {
			log.Info("Tainted node NoExecute", "node", name, "taint", key)
		}
		return true
	})
}

// setNoExecute leaves key as the node's only lifecycle NoExecute taint
// (none when key is empty).
func (c *Controller) setNoExecute(ctx context.Context, name, key string) error {
	now := metav1.NewTime(c.now())
	return c.updateTaints(ctx, name, func(taints []corev1.Taint) []corev1.Taint {
		var out []corev1.Taint
		for _, t := range taints {
			if t.Effect == corev1.TaintEffectNoExecute && (t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable) && t.Key != key {
				continue
			}
			out = append(out, t)
		}
		if key != "" && !taintsHave(out, key, corev1.TaintEffectNoExecute) {
			out = append(out, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now})
		}
		return out
	})
}

// updateTaints applies edit to the node's taints as read from the
// apiserver, retrying on conflicts; nothing is written when edit changes
// nothing.
func (c *Controller) updateTaints(ctx context.Context, name string, edit func([]corev1.Taint) []corev1.Taint) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		node, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get node %s: %w", name, err)
		}
		taints := edit(node.Spec.Taints)
		if sameTaints(taints, node.Spec.Taints) {
			return nil
		}
		node.Spec.Taints = taints
		if _, err := c.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update taints of node %s: %w", name, err)
		}
		return nil
	})
}

// markPodsNotReady sets the Ready condition of the node's pods to False:
// their kubelet can no longer say whether they are, and Services should
// stop sending them traffic.
func (c *Controller) markPodsNotReady(ctx context.Context, nodeName string) error {
	objs, err := c.pods.ByIndex(podsByNode, nodeName)
	if err != nil {
		return fmt.Errorf("pods of node %s: %w", nodeName, err)
	}
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		i := podConditionIndex(pod.Status.Conditions, corev1.PodReady)
		if i < 0 || pod.Status.Conditions[i].Status != corev1.ConditionTrue {
			continue
		}
		pod = pod.DeepCopy()
		pod.Status.Conditions[i].Status = corev1.ConditionFalse
		pod.Status.Conditions[i].LastTransitionTime = metav1.NewTime(c.now())
		if _, err := c.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("mark pod %s/%s not ready: %w", pod.Namespace, pod.Name, err)
		}
		c.recorder.Eventf(pod, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready")
	}
	return nil
}

// syncNoScheduleTaints keeps the NoSchedule taints that mirror node
// conditions and spec.unschedulable in step with them, as upstream does
// for the scheduler's sake.
func (c *Controller) syncNoScheduleTaints(ctx context.Context, name string) error {
	node, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", name, err)
	}
	want := noScheduleKeys(node)
	edit := func(taints []corev1.Taint) []corev1.Taint {
		var out []corev1.Taint
		for _, t := range taints {
			if t.Effect == corev1.TaintEffectNoSchedule && managedNoSchedule[t.Key] && !want[t.Key] {
				continue
			}
			out = append(out, t)
		}
		for _, key := range noScheduleOrder {
			if want[key] && !taintsHave(out, key, corev1.TaintEffectNoSchedule) {
				out = append(out, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
			}
		}
		return out
	}
	if sameTaints(edit(node.Spec.Taints), node.Spec.Taints) {
		return nil
	}
	return c.updateTaints(ctx, name, edit)
}

// leaseOf returns the node's heartbeat Lease, or nil.
func (c *Controller) leaseOf(name string) *coordinationv1.Lease {
	lease, err := c.leases.Leases(LeaseNamespace).Get(name)
	if err != nil {
		return nil
	}
	return lease
}
