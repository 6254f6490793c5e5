package nodelifecycle

import (
	corev1 "k8s.io/api/core/v1"
)

// noScheduleOrder lists the NoSchedule taints the controller manages, in
// the order it adds them.
var noScheduleOrder = []string{
	corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeMemoryPressure,
	corev1.TaintNodeDiskPressure, corev1.TaintNodeNetworkUnavailable, corev1.TaintNodePIDPressure,
	corev1.TaintNodeUnschedulable,
}

var managedNoSchedule = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range noScheduleOrder {
		m[k] = true
	}
	return m
}()

// noScheduleKeys are the NoSchedule taints node's conditions call for, as
// upstream maps them.
func noScheduleKeys(node *corev1.Node) map[string]bool {
	want := map[string]bool{}
	for _, c := range node.Status.Conditions {
		switch {
		case c.Type == corev1.NodeReady && c.Status == corev1.ConditionFalse:
			want[corev1.TaintNodeNotReady] = true
		case c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown:
			want[corev1.TaintNodeUnreachable] = true
		case c.Type == corev1.NodeMemoryPressure && c.Status == corev1.ConditionTrue:
			want[corev1.TaintNodeMemoryPressure] = true
		case c.Type == corev1.NodeDiskPressure && c.Status == corev1.ConditionTrue:
			want[corev1.TaintNodeDiskPressure] = true
		case c.Type == corev1.NodeNetworkUnavailable && c.Status == corev1.ConditionTrue:
			want[corev1.TaintNodeNetworkUnavailable] = true
		case c.Type == corev1.NodePIDPressure && c.Status == corev1.ConditionTrue:
			want[corev1.TaintNodePIDPressure] = true
		}
	}
	if node.Spec.Unschedulable {
		want[corev1.TaintNodeUnschedulable] = true
	}
	return want
}

// noExecuteKey is the NoExecute taint a Ready status calls for, or "".
func noExecuteKey(s corev1.ConditionStatus) string {
	switch s {
	case corev1.ConditionFalse:
		return corev1.TaintNodeNotReady
	case corev1.ConditionUnknown:
		return corev1.TaintNodeUnreachable
	}
	return ""
}

func hasTaint(node *corev1.Node, key string, effect corev1.TaintEffect) bool {
	return taintsHave(node.Spec.Taints, key, effect)
}

func taintsHave(taints []corev1.Taint, key string, effect corev1.TaintEffect) bool {
	for _, t := range taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

// sameTaints compares by key, value and effect: TimeAdded is when, not what.
func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Value != b[i].Value || a[i].Effect != b[i].Effect {
			return false
		}
	}
	return true
}

func condition(conds []corev1.NodeCondition, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func nodeConditionIndex(conds []corev1.NodeCondition, t corev1.NodeConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}

func podConditionIndex(conds []corev1.PodCondition, t corev1.PodConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}
