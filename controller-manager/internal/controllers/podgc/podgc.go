// Package podgc is the controller that deletes pods nothing else will:
// pods bound to nodes that no longer exist, terminating pods never
// scheduled, terminating pods on out-of-service nodes, and terminated pods
// beyond --terminated-pod-gc-threshold (oldest first).
package podgc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/metrics"
)

// Name is the controller's name in --controllers.
const Name = "podgc"

const (
	// DefaultCheckPeriod is how often pods are examined, as upstream.
	DefaultCheckPeriod = 20 * time.Second
	// DefaultQuarantine is how long a node must stay missing before its
	// pods are deleted, so a node being re-registered keeps them.
	DefaultQuarantine = 40 * time.Second
	// outOfServiceTaint marks a node an operator declared dead.
	outOfServiceTaint = "node.kubernetes.io/out-of-service"
)

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client deletes pods and writes their DisruptionTarget condition.
	Client kubernetes.Interface
	// Pods and Nodes are the shared informers it lists.
	Pods  coreinformers.PodInformer
	Nodes coreinformers.NodeInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Threshold is --terminated-pod-gc-threshold; 0 keeps every
	// terminated pod.
	Threshold int
	// CheckPeriod is how often pods are examined; 0 means
	// DefaultCheckPeriod (20s).
	CheckPeriod time.Duration
	// Quarantine is how long a node must stay missing before its pods are
	// deleted; 0 deletes them at once, negative means DefaultQuarantine
	// (40s).
	Quarantine time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the pod garbage collector.
type Controller struct {
	o      Options
	pods   corelisters.PodLister
	nodes  corelisters.NodeLister
	synced []cache.InformerSynced
	// missingSince is when each absent node was first seen missing.
	missingSince map[string]time.Time
	now          func() time.Time
}

// New returns the controller.
func New(o Options) *Controller {
	if o.CheckPeriod <= 0 {
		o.CheckPeriod = DefaultCheckPeriod
	}
	if o.Quarantine < 0 {
		o.Quarantine = DefaultQuarantine
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Controller{
		o: o, pods: o.Pods.Lister(), nodes: o.Nodes.Lister(),
		synced:       []cache.InformerSynced{o.Pods.Informer().HasSynced, o.Nodes.Informer().HasSynced},
		missingSince: map[string]time.Time{},
		now:          o.Now,
	}
}

// Run collects every check period until ctx ends; workers is unused: one
// pass at a time is plenty.
func (c *Controller) Run(ctx context.Context, _ int) {
	log := logr.FromContextOrDiscard(ctx).WithValues("controller", Name)
	ctx = logr.NewContext(ctx, log)
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced...) {
		return
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		start := time.Now()
		err := c.gc(ctx)
		metrics.ObserveSync(Name, time.Since(start), err)
		if err != nil {
			log.Error(err, "Pod garbage collection failed; will retry")
		}
	}, c.o.CheckPeriod)
}

// gc runs one pass.
func (c *Controller) gc(ctx context.Context) error {
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	var errs []error
	if c.o.Threshold > 0 {
		errs = append(errs, c.gcTerminated(ctx, pods))
	}
	errs = append(errs, c.gcOutOfService(ctx, pods, nodes))
	errs = append(errs, c.gcOrphaned(ctx, pods, nodes))
	errs = append(errs, c.gcUnscheduledTerminating(ctx, pods))
	return errors.Join(errs...)
}

func terminated(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// gcTerminated deletes the oldest terminated pods beyond the threshold.
func (c *Controller) gcTerminated(ctx context.Context, pods []*corev1.Pod) error {
	var done []*corev1.Pod
	for _, p := range pods {
		if terminated(p) && p.DeletionTimestamp == nil {
			done = append(done, p)
		}
	}
	excess := len(done) - c.o.Threshold
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(done, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return 0
	})
	logr.FromContextOrDiscard(ctx).Info("Deleting terminated pods over the threshold", "terminated", len(done), "threshold", c.o.Threshold, "deleting", excess)
	var errs []error
	for _, p := range done[:excess] {
		errs = append(errs, c.forceDelete(ctx, p, ""))
	}
	return errors.Join(errs...)
}

// gcOutOfService deletes terminating pods on not-ready nodes an operator
// tainted out of service.
func (c *Controller) gcOutOfService(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) error {
	dead := sets.New[string]()
	for _, n := range nodes {
		if !nodeReady(n) && slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == outOfServiceTaint && t.Effect == corev1.TaintEffectNoExecute
		}) {
			dead.Insert(n.Name)
		}
	}
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil && dead.Has(p.Spec.NodeName) {
			errs = append(errs, c.forceDelete(ctx, p, "PodGC: node is out-of-service"))
		}
	}
	return errors.Join(errs...)
}

// gcOrphaned deletes pods bound to nodes missing for the quarantine
// period, confirmed gone by the apiserver.
func (c *Controller) gcOrphaned(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) error {
	known := sets.New[string]()
	for _, n := range nodes {
		known.Insert(n.Name)
	}
	now := c.now()
	missing := sets.New[string]()
	for _, p := range pods {
		if p.Spec.NodeName != "" && !known.Has(p.Spec.NodeName) {
			missing.Insert(p.Spec.NodeName)
		}
	}
	for name := range c.missingSince {
		if !missing.Has(name) {
			delete(c.missingSince, name)
		}
	}
	gone := sets.New[string]()
	for name := range missing {
		first, ok := c.missingSince[name]
		if !ok {
			c.missingSince[name] = now
			first = now
		}
		if now.Sub(first) < c.o.Quarantine {
			continue
		}
		_, err := c.o.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			gone.Insert(name)
		} else if err != nil {
			return fmt.Errorf("get node %s: %w", name, err)
		}
	}
	var errs []error
	for _, p := range pods {
		if gone.Has(p.Spec.NodeName) {
			errs = append(errs, c.forceDelete(ctx, p, "PodGC: node no longer exists"))
		}
	}
	return errors.Join(errs...)
}

// gcUnscheduledTerminating deletes terminating pods never bound to a
// node: no kubelet will ever confirm their end.
func (c *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*corev1.Pod) error {
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			errs = append(errs, c.forceDelete(ctx, p, "PodGC: unscheduled pod is terminating"))
		}
	}
	return errors.Join(errs...)
}

// forceDelete marks a running pod Failed with a DisruptionTarget
// condition saying why (when reason is given), then deletes it with no
// grace period.
func (c *Controller) forceDelete(ctx context.Context, p *corev1.Pod, reason string) error {
	pods := c.o.Client.CoreV1().Pods(p.Namespace)
	if reason != "" && !terminated(p) {
		// A strategic merge patch of status, as upstream's collector
		// writes it: its role may patch pods/status, not update it.
		cond := corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByPodGC",
			Message: reason, LastTransitionTime: metav1.NewTime(c.now()),
		}
		patch, err := json.Marshal(map[string]any{"status": map[string]any{
			"phase": corev1.PodFailed, "conditions": []corev1.PodCondition{cond},
		}})
		if err != nil {
			return fmt.Errorf("status patch of pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		if _, err := pods.Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) {
			c.o.Recorder.Eventf(p, corev1.EventTypeWarning, "FailedToMarkPod", "Error marking pod failed before deletion: %v", err)
		}
	}
	zero := int64(0)
	uid := p.UID
	err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		logr.FromContextOrDiscard(ctx).V(2).Info("Deleted pod", "pod", p.Namespace+"/"+p.Name, "reason", reason)
		return nil
	}
	return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
