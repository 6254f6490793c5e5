package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/controller-manager/internal/metrics"
)

// Reasons and messages of the conditions the controller sets, as upstream
// words them (tools and tests match on them).
const (
	reasonUnknown       = "NodeStatusUnknown"
	messageUnknown      = "Kubelet stopped posting node status."
	reasonNeverUpdated  = "NodeStatusNeverUpdated"
	messageNeverUpdated = "Kubelet never posted node status."
)

// lostConditions are the kubelet-reported conditions that become Unknown
// when it goes quiet.
var lostConditions = []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// nodeHealth is what the controller remembers of a node between passes.
// Times are this process's clock at the moment a change was observed, so
// skew between the kubelet's clock and ours does not matter.
type nodeHealth struct {
	probe      time.Time
	heartbeat  metav1.Time
	leaseRenew metav1.MicroTime
}

// updateHealth notes any sign of life of node (a new Ready heartbeat or a
// renewed Lease) and, once none has come for the grace period, sets its
// conditions to Unknown. It returns the Ready condition before and after.
func (c *Controller) updateHealth(ctx context.Context, node *corev1.Node) (observed, current *corev1.NodeCondition, err error) {
	now := c.now()
	ready := condition(node.Status.Conditions, corev1.NodeReady)
	grace := c.opts.MonitorGracePeriod
	if ready == nil {
		grace = c.opts.StartupGracePeriod
	}
	var renew *metav1.MicroTime
	if lease := c.leaseOf(node.Name); lease != nil && lease.Spec.RenewTime != nil {
		renew = lease.Spec.RenewTime
	}

	c.mu.Lock()
	h := c.health[node.Name]
	switch {
	case h == nil:
		h = &nodeHealth{probe: now}
		if ready != nil {
			h.heartbeat = ready.LastHeartbeatTime
		}
		if renew != nil {
			h.leaseRenew = *renew
		}
		c.health[node.Name] = h
	default:
		if ready != nil && !ready.LastHeartbeatTime.Equal(&h.heartbeat) {
			h.probe, h.heartbeat = now, ready.LastHeartbeatTime
		}
		if renew != nil && renew.After(h.leaseRenew.Time) {
			h.probe, h.leaseRenew = now, *renew
		}
	}
	stale := now.After(h.probe.Add(grace))
	c.mu.Unlock()

	if !stale {
		return ready, ready, nil
	}
	updated, changed := markUnknown(node, metav1.NewTime(now))
	if !changed {
		return ready, ready, nil
	}
	logr.FromContextOrDiscard(ctx).Info("Node stopped posting status; marking its conditions Unknown", "node", node.Name, "gracePeriod", grace)
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return ready, ready, fmt.Errorf("update status of node %s: %w", node.Name, err)
	}
	return ready, condition(updated.Status.Conditions, corev1.NodeReady), nil
}

// markUnknown returns a copy of node whose kubelet conditions are Unknown,
// and whether that changed anything. Heartbeat times are kept: they are the
// kubelet's, and the next real heartbeat must still look new.
func markUnknown(node *corev1.Node, now metav1.Time) (*corev1.Node, bool) {
	node = node.DeepCopy()
	changed := false
	for _, t := range lostConditions {
		i := nodeConditionIndex(node.Status.Conditions, t)
		if i < 0 {
			node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{
				Type: t, Status: corev1.ConditionUnknown,
				Reason: reasonNeverUpdated, Message: messageNeverUpdated,
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: now,
			})
			changed = true
			continue
		}
		cond := &node.Status.Conditions[i]
		if cond.Status == corev1.ConditionUnknown {
			continue
		}
		cond.Status = corev1.ConditionUnknown
		cond.Reason, cond.Message = reasonUnknown, messageUnknown
		cond.LastTransitionTime = now
		changed = true
	}
	return node, changed
}

// handleDisruption sets each zone's eviction rate from how many of its
// nodes are not ready. When every node of every zone is not ready the
// fault is more likely this controller's connection, or the control
// plane's, than the nodes: it stops evicting and lifts the NoExecute
// taints, as upstream's "master disruption mode" does.
func (c *Controller) handleDisruption(ctx context.Context, byZone map[string][]*corev1.NodeCondition, nodes []*corev1.Node) {
	log := logr.FromContextOrDiscard(ctx)
	for zone, conds := range byZone {
		unhealthy := 0
		for _, cond := range conds {
			if cond == nil || cond.Status != corev1.ConditionTrue {
				unhealthy++
			}
		}
		metrics.SetZone(zone, len(conds), unhealthy)
	}
	c.mu.Lock()
	plan := c.zones.plan(byZone)
	c.mu.Unlock()
	switch plan {
	case enteringFullDisruption:
		log.Info("Every node is not ready: entering full disruption mode, no evictions")
		for _, node := range nodes {
			if err := c.setNoExecute(ctx, node.Name, ""); err != nil {
				log.Error(err, "Lifting NoExecute taint failed", "node", node.Name)
			}
		}
	case leavingFullDisruption:
		log.Info("Some node is ready again: leaving full disruption mode")
		// Every node gets a fresh grace period before it can be tainted.
		c.mu.Lock()
		now := c.now()
		for _, h := range c.health {
			h.probe = now
		}
		c.mu.Unlock()
	}
}
