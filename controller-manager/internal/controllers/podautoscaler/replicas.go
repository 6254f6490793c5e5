package podautoscaler

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// PodMetric is one pod's usage of a resource, from the metrics API.
type PodMetric struct {
	// Value is the usage in milli-units (millicores, milli-bytes).
	Value     int64
	Timestamp time.Time
	Window    time.Duration
}

// calculator holds the settings of the replica calculation; they are
// kube-controller-manager's --horizontal-pod-autoscaler-* flags.
type calculator struct {
	tolerance         float64
	cpuInitialization time.Duration
	initialReadiness  time.Duration
	now               func() time.Time
}

// errNoMetrics is returned when none of the target's pods has a metric.
var errNoMetrics = errors.New("did not receive metrics for targeted pods (pods might be unready)")

// resourceReplicas proposes a replica count from a resource metric, as
// upstream's replica calculator does: pods being deleted or failed are
// left out; when scaling up, unready pods (and, for CPU, pods still
// starting) count as using nothing; pods without a metric count as using
// nothing when scaling up and their full target when scaling down; no
// change is proposed within the tolerance or when counting them in would
// reverse the direction. Either targetUtilization (percent of request) or
// targetAverage (milli-units a pod) is used. container, when set, limits
// the metric to that container. It returns the proposal, the current
// utilization (percent; 0 for an average target) and the current average
// (milli-units).
func (c calculator) resourceReplicas(current int32, targetUtilization *int32, targetAverage int64, resource corev1.ResourceName, container string, metrics map[string]PodMetric, pods []*corev1.Pod) (int32, int32, int64, error) {
	if len(pods) == 0 {
		return 0, 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	ready, ignored, missing := c.groupPods(pods, metrics, resource)
	for name := range ignored {
		delete(metrics, name)
	}
	if len(metrics) == 0 {
		return 0, 0, 0, errNoMetrics
	}
	var requests map[string]int64
	if targetUtilization != nil {
		var err error
		if requests, err = podRequests(pods, resource, container); err != nil {
			return 0, 0, 0, err
		}
	}
	ratio := func(m map[string]PodMetric) (float64, int32, int64, error) {
		var sum, req int64
		for name, pm := range m {
			sum += pm.Value
			if requests != nil {
				r, ok := requests[name]
				if !ok {
					continue
				}
				req += r
			}
		}
		avg := sum / int64(len(m))
		if targetUtilization == nil {
			return float64(avg) / float64(targetAverage), 0, avg, nil
		}
		if req == 0 {
			return 0, 0, 0, fmt.Errorf("no %s requests on the pods with metrics", resource)
		}
		util := int32(sum * 100 / req)
		return float64(util) / float64(*targetUtilization), util, avg, nil
	}
	usage, util, avg, err := ratio(metrics)
	if err != nil {
		return 0, 0, 0, err
	}
	scaleUpWithUnready := len(ignored) > 0 && usage > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if math.Abs(1.0-usage) <= c.tolerance {
			return current, util, avg, nil
		}
		return int32(math.Ceil(usage * float64(ready))), util, avg, nil
	}
	// Fill in the pods without a trustworthy metric, in the direction that
	// damps the change.
	filled := map[string]PodMetric{}
	for k, v := range metrics {
		filled[k] = v
	}
	fill := func(name string, high bool) {
		if !high {
			filled[name] = PodMetric{Value: 0}
			return
		}
		if targetUtilization != nil {
			filled[name] = PodMetric{Value: requests[name]}
		} else {
			filled[name] = PodMetric{Value: targetAverage}
		}
	}
	for name := range missing {
		fill(name, usage < 1.0)
	}
	if scaleUpWithUnready {
		for name := range ignored {
			fill(name, false)
		}
	}
	newUsage, _, _, err := ratio(filled)
	if err != nil {
		return 0, 0, 0, err
	}
	if math.Abs(1.0-newUsage) <= c.tolerance || (usage < 1.0 && newUsage > 1.0) || (usage > 1.0 && newUsage < 1.0) {
		return current, util, avg, nil
	}
	proposal := int32(math.Ceil(newUsage * float64(len(filled))))
	if (newUsage < 1.0 && proposal > current) || (newUsage > 1.0 && proposal < current) {
		return current, util, avg, nil
	}
	return proposal, util, avg, nil
}

// groupPods sorts the pods: ready ones with metrics are counted, ignored
// ones (unready, or CPU still initializing) and missing ones (no metric)
// are returned by name. Pods being deleted or failed are dropped.
func (c calculator) groupPods(pods []*corev1.Pod, metrics map[string]PodMetric, resource corev1.ResourceName) (ready int, ignored, missing map[string]bool) {
	ignored, missing = map[string]bool{}, map[string]bool{}
	now := c.now()
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			delete(metrics, pod.Name)
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			ignored[pod.Name] = true
			continue
		}
		m, ok := metrics[pod.Name]
		if !ok {
			missing[pod.Name] = true
			continue
		}
		if resource == corev1.ResourceCPU && c.unreadyForCPU(pod, m, now) {
			ignored[pod.Name] = true
			continue
		}
		ready++
	}
	return ready, ignored, missing
}

// unreadyForCPU reports whether a pod's CPU sample is not to be trusted:
// within the initialization period, when it is unready or its sample
// predates its readiness; after it, when it never became ready after the
// initial readiness delay.
func (c calculator) unreadyForCPU(pod *corev1.Pod, m PodMetric, now time.Time) bool {
	var cond *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			cond = &pod.Status.Conditions[i]
		}
	}
	if cond == nil || pod.Status.StartTime == nil {
		return true
	}
	start := pod.Status.StartTime.Time
	if start.Add(c.cpuInitialization).After(now) {
		return cond.Status == corev1.ConditionFalse || m.Timestamp.Before(cond.LastTransitionTime.Add(m.Window))
	}
	return cond.Status == corev1.ConditionFalse && start.Add(c.initialReadiness).After(cond.LastTransitionTime.Time)
}

// podRequests sums each pod's containers' requests of resource, in
// milli-units; a container without one is an error, as upstream: a
// utilization target means nothing without requests.
func podRequests(pods []*corev1.Pod, resource corev1.ResourceName, container string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, pod := range pods {
		var sum int64
		for _, c := range pod.Spec.Containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
			}
			sum += q.MilliValue()
		}
		out[pod.Name] = sum
	}
	return out, nil
}
