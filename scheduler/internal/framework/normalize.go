package framework

import fwk "k8s.io/kube-scheduler/framework"

// DefaultNormalizeScore scales scores to [0, maxPriority] by the highest
// one, reversing them (maxPriority - s) when reverse is set; all-zero
// scores become maxPriority when reversed. It is upstream's helper of the
// same name, which several plugins share.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores fwk.NodeScoreList) *fwk.Status {
	var maxCount int64
	for i := range scores {
		maxCount = max(maxCount, scores[i].Score)
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return nil
	}
	for i := range scores {
		s := scores[i].Score
		s = maxPriority * s / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
	return nil
}

// AsNodeInfo returns the implementation behind a fwk.NodeInfo, or a fresh
// copy holding the same node and pods when it is someone else's.
func AsNodeInfo(n fwk.NodeInfo) *NodeInfo {
	if ni, ok := n.(*NodeInfo); ok {
		return ni
	}
	ni := NewNodeInfo()
	if n.Node() != nil {
		ni.SetNode(n.Node())
	}
	for _, p := range n.GetPods() {
		ni.AddPodInfo(p)
	}
	return ni
}
