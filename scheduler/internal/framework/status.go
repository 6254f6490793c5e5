package framework

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
)

// NodeToStatus records why each node was rejected; nodes not in the map
// (those a PreFilter result excluded) share AbsentStatus. It implements
// fwk.NodeToStatusReader.
type NodeToStatus struct {
	statuses     map[string]*fwk.Status
	AbsentStatus *fwk.Status
}

var _ fwk.NodeToStatusReader = &NodeToStatus{}

// NewNodeToStatus returns an empty map whose absent nodes are
// UnschedulableAndUnresolvable.
func NewNodeToStatus() *NodeToStatus {
	return &NodeToStatus{statuses: map[string]*fwk.Status{}, AbsentStatus: fwk.NewStatus(fwk.UnschedulableAndUnresolvable)}
}

// Set records node's status.
func (m *NodeToStatus) Set(node string, s *fwk.Status) { m.statuses[node] = s }

// Len counts the nodes with a recorded status.
func (m *NodeToStatus) Len() int { return len(m.statuses) }

// Get implements fwk.NodeToStatusReader.
func (m *NodeToStatus) Get(node string) *fwk.Status {
	if s, ok := m.statuses[node]; ok {
		return s
	}
	return m.AbsentStatus
}

// NodesForStatusCode implements fwk.NodeToStatusReader.
func (m *NodeToStatus) NodesForStatusCode(lister fwk.NodeInfoLister, code fwk.Code) ([]fwk.NodeInfo, error) {
	all, err := lister.List()
	if err != nil {
		return nil, err
	}
	var out []fwk.NodeInfo
	for _, n := range all {
		if m.Get(n.Node().Name).Code() == code {
			out = append(out, n)
		}
	}
	return out, nil
}

// Diagnosis explains a failed scheduling attempt.
type Diagnosis struct {
	NodeToStatus *NodeToStatus
	// UnschedulablePlugins rejected the pod; their registered events may
	// make it schedulable.
	UnschedulablePlugins sets.Set[string]
	PendingPlugins       sets.Set[string]
	// PreFilterMsg is the PreFilter rejection, when one rejected the pod.
	PreFilterMsg string
	// PostFilterMsg is the PostFilter (preemption) outcome.
	PostFilterMsg string
}

// FitError is the error of a pod no node fits. Its message is upstream's,
// word for word: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s)
// had untolerated taint(s). preemption: ...".
type FitError struct {
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error implements error.
func (f *FitError) Error() string {
	msg := fmt.Sprintf("0/%v nodes are available:", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		msg += " " + f.Diagnosis.PreFilterMsg + "."
	} else {
		msg += " " + strings.Join(ReasonsHistogram(f.Diagnosis.NodeToStatus, f.NumAllNodes), ", ") + "."
	}
	// Upstream appends its separator to a message that already ends in a
	// period, so real kube-scheduler messages end "for incoming pod.."; kept
	// so that tooling matching them keeps working.
	if f.Diagnosis.PostFilterMsg != "" {
		msg += " " + f.Diagnosis.PostFilterMsg + "."
	}
	return msg
}

// ReasonsHistogram counts the nodes per rejection reason, as "N reason",
// sorted; of numAll nodes, those without a recorded status count under
// the absent status's reasons.
func ReasonsHistogram(m *NodeToStatus, numAll int) []string {
	if m == nil {
		return nil
	}
	counts := map[string]int{}
	for _, s := range m.statuses {
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	if absent := numAll - len(m.statuses); absent > 0 && m.AbsentStatus != nil {
		for _, r := range m.AbsentStatus.Reasons() {
			counts[r] += absent
		}
	}
	out := make([]string, 0, len(counts))
	for r, n := range counts {
		out = append(out, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(out)
	return out
}
