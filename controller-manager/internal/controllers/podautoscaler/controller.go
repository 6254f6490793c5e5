// Package podautoscaler is the horizontal-pod-autoscaler controller for
// autoscaling/v2 HorizontalPodAutoscalers: every sync period it reads the
// target's scale subresource and its pods' resource usage from the
// metrics API (metrics.k8s.io, when served), proposes a replica count per
// metric, takes the highest, applies the behaviour's stabilization windows
// and rate policies and the min/max bounds, scales, and writes status with
// upstream's AbleToScale, ScalingActive and ScalingLimited conditions.
// Pods, Object and External metrics need the custom and external metrics
// APIs, which are not read: such a metric is reported as failing.
package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	autoscalinginformers "k8s.io/client-go/informers/autoscaling/v2"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/metrics"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "horizontalpodautoscaling"

// DefaultSyncPeriod is upstream's --horizontal-pod-autoscaler-sync-period.
const DefaultSyncPeriod = 15 * time.Second

// Options configure the controller; the durations and tolerance are the
// --horizontal-pod-autoscaler-* flags. Fields that name no default are
// required.
type Options struct {
	// Client writes HorizontalPodAutoscaler status.
	Client kubernetes.Interface
	// Autoscalers and Pods are the shared informers; New registers its
	// handlers on Autoscalers.
	Autoscalers autoscalinginformers.HorizontalPodAutoscalerInformer
	Pods        coreinformers.PodInformer
	// Scaler reads and writes the targets' scale subresource.
	Scaler Scaler
	// Metrics reads Resource and ContainerResource metrics.
	Metrics MetricsSource
	// Custom reads Pods, Object and External metrics; nil reports them
	// failed.
	Custom CustomMetricsSource
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// SyncPeriod is how often each autoscaler is looked at again
	// (--horizontal-pod-autoscaler-sync-period); 0 means
	// DefaultSyncPeriod (15s).
	SyncPeriod time.Duration
	// DownscaleWindow is the scale-down stabilization window of
	// autoscalers whose behaviour sets none
	// (--horizontal-pod-autoscaler-downscale-stabilization); 0 means none.
	DownscaleWindow time.Duration
	// Tolerance is the relative distance from the target within which no
	// rescale happens (--horizontal-pod-autoscaler-tolerance); 0 rescales
	// on any difference.
	Tolerance float64
	// CPUInitialization is the time after a pod starts during which its
	// CPU sample counts only if taken after it became ready
	// (--horizontal-pod-autoscaler-cpu-initialization-period); 0 means
	// none.
	CPUInitialization time.Duration
	// InitialReadinessDelay is the time after a pod starts during which a
	// not-ready pod is taken as still starting and left out of CPU
	// scaling (--horizontal-pod-autoscaler-initial-readiness-delay); 0
	// means none.
	InitialReadinessDelay time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller autoscales. Its queue holds autoscaler keys; each is looked
// at again every sync period.
type Controller struct {
	opts   Options
	client kubernetes.Interface
	hpas   autoscalinglisters.HorizontalPodAutoscalerLister
	pods   corelisters.PodLister
	synced []cache.InformerSynced
	loop   *worker.Loop
	calc   calculator
	now    func() time.Time

	mu        sync.Mutex
	histories map[string]*history
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	c := &Controller{
		opts: o, client: o.Client, now: now,
		hpas:      o.Autoscalers.Lister(),
		pods:      o.Pods.Lister(),
		synced:    []cache.InformerSynced{o.Autoscalers.Informer().HasSynced, o.Pods.Informer().HasSynced},
		calc:      calculator{tolerance: o.Tolerance, cpuInitialization: o.CPUInitialization, initialReadiness: o.InitialReadinessDelay, now: now},
		histories: map[string]*history{},
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Autoscalers.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.loop.AddObject,
		// Status writes come back as updates; only spec changes need an
		// early look, the sync period does the rest.
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*autoscalingv2.HorizontalPodAutoscaler)
			n, ok2 := obj.(*autoscalingv2.HorizontalPodAutoscaler)
			if ok1 && ok2 && o.Generation == n.Generation {
				return
			}
			c.loop.AddObject(obj)
		},
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.mu.Lock()
				delete(c.histories, key)
				c.mu.Unlock()
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("watch horizontalpodautoscalers: %w", err)
	}
	return c, nil
}

// Run autoscales with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	hpa, err := c.hpas.HorizontalPodAutoscalers(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get horizontalpodautoscaler %s: %w", key, err)
	}
	// Level-triggered on a timer: whatever happens, look again next period.
	defer c.loop.AddAfter(key, c.opts.SyncPeriod)
	return c.reconcile(ctx, key, hpa.DeepCopy())
}

// reconcile is one evaluation of hpa (a copy the caller owns).
func (c *Controller) reconcile(ctx context.Context, key string, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	log := logr.FromContextOrDiscard(ctx)
	now := c.now()
	status := hpa.Status.DeepCopy()
	status.ObservedGeneration = ptr.To(hpa.Generation)

	sc, gr, err := c.opts.Scaler.Get(ctx, hpa.Namespace, hpa.Spec.ScaleTargetRef)
	if err != nil {
		c.opts.Recorder.Event(hpa, corev1.EventTypeWarning, "FailedGetScale", err.Error())
		setCondition(status, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", fmt.Sprintf("the HPA controller was unable to get the target's current scale: %v", err), now)
		return c.writeStatus(ctx, hpa, status)
	}
	setCondition(status, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale", now)
	current := sc.Spec.Replicas
	status.CurrentReplicas = current
	minReplicas := ptr.Deref(hpa.Spec.MinReplicas, 1)
	maxReplicas := hpa.Spec.MaxReplicas

	var desired int32
	reason := ""
	behavior := defaultBehavior(hpa.Spec.Behavior, c.opts.DownscaleWindow)
	c.mu.Lock()
	h := c.histories[key]
	if h == nil {
		h = &history{}
		c.histories[key] = h
	}
	c.mu.Unlock()
	switch {
	case current == 0 && minReplicas != 0:
		// Scaled to zero by hand: autoscaling stays off until it is not.
		desired = 0
		setCondition(status, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero", now)
	case current > maxReplicas:
		desired, reason = maxReplicas, "Current number of replicas above Spec.MaxReplicas"
		setCondition(status, autoscalingv2.ScalingLimited, corev1.ConditionTrue, limitTooMany, limitMessages[limitTooMany], now)
	case current < minReplicas:
		desired, reason = minReplicas, "Current number of replicas below Spec.MinReplicas"
		setCondition(status, autoscalingv2.ScalingLimited, corev1.ConditionTrue, limitTooFew, limitMessages[limitTooFew], now)
	default:
		proposal, metricName, metrics, err := c.proposeReplicas(ctx, hpa, current, sc.Status.Selector, status, now)
		status.CurrentMetrics = metrics
		if err != nil {
			return c.writeStatus(ctx, hpa, status)
		}
		c.mu.Lock()
		var stabilized int32
		var limit string
		desired, stabilized, limit = h.normalize(current, proposal, minReplicas, maxReplicas, behavior, now)
		c.mu.Unlock()
		switch {
		case stabilized > proposal:
			setCondition(status, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation", now)
		case stabilized < proposal:
			setCondition(status, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation", now)
		default:
			setCondition(status, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size", now)
		}
		setCondition(status, autoscalingv2.ScalingLimited, limitStatus(limit), limit, limitMessages[limit], now)
		switch {
		case desired > current:
			reason = fmt.Sprintf("%s above target", metricName)
		case desired < current:
			reason = "All metrics below target"
		}
	}

	if desired != current {
		sc = sc.DeepCopy()
		sc.Spec.Replicas = desired
		if err := c.opts.Scaler.Update(ctx, hpa.Namespace, gr, sc); err != nil {
			c.opts.Recorder.Eventf(hpa, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, reason, err)
			setCondition(status, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", fmt.Sprintf("the HPA controller was unable to update the target scale: %v", err), now)
			if werr := c.writeStatus(ctx, hpa, status); werr != nil {
				log.Error(werr, "Writing autoscaler status failed", "hpa", key)
			}
			return fmt.Errorf("rescale %s to %d: %w", key, desired, err)
		}
		c.mu.Lock()
		h.record(current, desired, behavior, now)
		c.mu.Unlock()
		if desired > current {
			metrics.Rescale("up")
		} else {
			metrics.Rescale("down")
		}
		setCondition(status, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", fmt.Sprintf("the HPA controller was able to update the target scale to %d", desired), now)
		c.opts.Recorder.Eventf(hpa, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, reason)
		log.Info("Rescaled", "hpa", key, "from", current, "to", desired, "reason", reason)
		status.LastScaleTime = &metav1.Time{Time: now}
	}
	status.DesiredReplicas = desired
	return c.writeStatus(ctx, hpa, status)
}

func limitStatus(reason string) corev1.ConditionStatus {
	if reason == withinRange {
		return corev1.ConditionFalse
	}
	return corev1.ConditionTrue
}

// proposeReplicas evaluates every metric and returns the largest
// proposal. Metrics that fail are reported; when all fail, ScalingActive
// is False and an error returned.
func (c *Controller) proposeReplicas(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, current int32, selectorText string, status *autoscalingv2.HorizontalPodAutoscalerStatus, now time.Time) (int32, string, []autoscalingv2.MetricStatus, error) {
	if selectorText == "" {
		msg := "the HPA target's scale is missing a selector"
		c.opts.Recorder.Event(hpa, corev1.EventTypeWarning, "SelectorRequired", msg)
		setCondition(status, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", msg, now)
		return 0, "", nil, errors.New(msg)
	}
	selector, err := labels.Parse(selectorText)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.opts.Recorder.Event(hpa, corev1.EventTypeWarning, "InvalidSelector", msg)
		setCondition(status, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", msg, now)
		return 0, "", nil, errors.New(msg)
	}
	pods, err := c.pods.Pods(hpa.Namespace).List(selector)
	if err != nil {
		return 0, "", nil, fmt.Errorf("list pods: %w", err)
	}
	var (
		best     int32 = -1
		bestName string
		statuses []autoscalingv2.MetricStatus
		failures []error
		reason   string
	)
	for _, spec := range hpa.Spec.Metrics {
		proposal, ms, name, failReason, err := c.evaluate(ctx, hpa.Namespace, current, spec, selector, pods)
		if err != nil {
			failures = append(failures, err)
			reason = failReason
			c.opts.Recorder.Event(hpa, corev1.EventTypeWarning, failReason, err.Error())
			statuses = append(statuses, autoscalingv2.MetricStatus{Type: spec.Type})
			continue
		}
		statuses = append(statuses, ms)
		if proposal > best {
			best, bestName = proposal, name
		}
	}
	if best < 0 {
		msg := "the HPA was unable to compute the replica count: no metrics"
		if len(failures) > 0 {
			msg = fmt.Sprintf("the HPA was unable to compute the replica count: %v", errors.Join(failures...))
		}
		if reason == "" {
			reason = "FailedGetResourceMetric"
		}
		setCondition(status, autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, msg, now)
		return 0, "", statuses, errors.New(msg)
	}
	setCondition(status, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound",
		fmt.Sprintf("the HPA was able to successfully calculate a replica count from %s", bestName), now)
	return best, bestName, statuses, nil
}

// evaluate proposes replicas from one metric; on failure it returns the
// condition reason upstream uses for that metric type.
func (c *Controller) evaluate(ctx context.Context, namespace string, current int32, spec autoscalingv2.MetricSpec, selector labels.Selector, pods []*corev1.Pod) (int32, autoscalingv2.MetricStatus, string, string, error) {
	var (
		res       corev1.ResourceName
		container string
		target    autoscalingv2.MetricTarget
		failed    = "FailedGetResourceMetric"
	)
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			return 0, autoscalingv2.MetricStatus{}, "", failed, errors.New("metric of type Resource has no resource")
		}
		res, target = spec.Resource.Name, spec.Resource.Target
	case autoscalingv2.ContainerResourceMetricSourceType:
		failed = "FailedGetContainerResourceMetric"
		if spec.ContainerResource == nil {
			return 0, autoscalingv2.MetricStatus{}, "", failed, errors.New("metric of type ContainerResource has no containerResource")
		}
		res, container, target = spec.ContainerResource.Name, spec.ContainerResource.Container, spec.ContainerResource.Target
	case autoscalingv2.PodsMetricSourceType, autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType:
		return c.evaluateCustom(ctx, namespace, current, spec, selector, pods)
	default:
		return 0, autoscalingv2.MetricStatus{}, "", "InvalidMetricSourceType", fmt.Errorf("unknown metric source type %q", spec.Type)
	}
	var targetAverage int64
	if target.AverageUtilization == nil {
		if target.AverageValue == nil {
			return 0, autoscalingv2.MetricStatus{}, "", failed, fmt.Errorf("invalid %s metric source: neither a utilization target nor a value target was set", res)
		}
		targetAverage = target.AverageValue.MilliValue()
	}
	metrics, err := c.opts.Metrics.PodMetrics(ctx, namespace, selector, res, container)
	if err != nil {
		return 0, autoscalingv2.MetricStatus{}, "", failed, fmt.Errorf("failed to get %s utilization: %w", res, err)
	}
	proposal, util, avg, err := c.calc.resourceReplicas(current, target.AverageUtilization, targetAverage, res, container, metrics, pods)
	if err != nil {
		return 0, autoscalingv2.MetricStatus{}, "", failed, fmt.Errorf("failed to get %s utilization: %w", res, err)
	}
	cur := autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)}
	name := fmt.Sprintf("%s resource", res)
	if target.AverageUtilization != nil {
		cur.AverageUtilization = ptr.To(util)
		name = fmt.Sprintf("%s resource utilization (percentage of request)", res)
	}
	var ms autoscalingv2.MetricStatus
	if container == "" {
		ms = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: res, Current: cur}}
	} else {
		name = fmt.Sprintf("%s container resource", res)
		ms = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: res, Container: container, Current: cur}}
	}
	return proposal, ms, name, "", nil
}

// setCondition sets a condition, keeping its transition time unless its
// status changes.
func setCondition(status *autoscalingv2.HorizontalPodAutoscalerStatus, t autoscalingv2.HorizontalPodAutoscalerConditionType, s corev1.ConditionStatus, reason, message string, now time.Time) {
	for i := range status.Conditions {
		c := &status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != s {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.Status, c.Reason, c.Message = s, reason, message
		return
	}
	status.Conditions = append(status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
		Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now),
	})
}

// writeStatus writes status unless it is what hpa already has.
func (c *Controller) writeStatus(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, status *autoscalingv2.HorizontalPodAutoscalerStatus) error {
	if apiequality.Semantic.DeepEqual(&hpa.Status, status) {
		return nil
	}
	hpa.Status = *status
	if _, err := c.client.AutoscalingV2().HorizontalPodAutoscalers(hpa.Namespace).UpdateStatus(ctx, hpa, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of horizontalpodautoscaler %s/%s: %w", hpa.Namespace, hpa.Name, err)
	}
	return nil
}
