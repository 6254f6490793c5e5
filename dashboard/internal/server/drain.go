package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// mirrorAnnotation marks the API copy of a kubelet's static pod: evicting
// it would do nothing, the kubelet makes it again.
const mirrorAnnotation = "kubernetes.io/config.mirror"

// PodResult is what a drain did with one pod.
type PodResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Reason says why the pod was skipped, or the API's refusal.
	Reason string `json:"reason,omitempty"`
}

// DrainReport is the outcome of one drain pass over a node.
type DrainReport struct {
	Node string `json:"node"`
	// Evicted pods were accepted for eviction; they go away with their
	// grace period.
	Evicted []PodResult `json:"evicted"`
	// Skipped pods are DaemonSet and mirror pods (their controller or
	// kubelet would put them back) and pods already terminating.
	Skipped []PodResult `json:"skipped"`
	// Refused pods were not evicted because a PodDisruptionBudget allows no
	// disruption now (the API's 429); a later drain may succeed.
	Refused []PodResult `json:"refused"`
	// Failed pods met another error, the user's RBAC included.
	Failed []PodResult `json:"failed"`
}

// drain cordons node and asks the Eviction API to evict each of its pods,
// as the client's user, once: like `kubectl drain --ignore-daemonsets`
// without its wait, the page watching the pods go instead.
func drain(ctx context.Context, cs kubernetes.Interface, node string) (*DrainReport, error) {
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		return nil, fmt.Errorf("cordon %s: %w", node, err)
	}
	report := &DrainReport{Node: node, Evicted: []PodResult{}, Skipped: []PodResult{}, Refused: []PodResult{}, Failed: []PodResult{}}
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(), Limit: 500}
	for {
		pods, err := cs.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list pods on %s: %w", node, err)
		}
		for i := range pods.Items {
			report.evict(ctx, cs, &pods.Items[i])
		}
		if opts.Continue = pods.Continue; opts.Continue == "" {
			return report, nil
		}
	}
}

func (r *DrainReport) evict(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod) {
	res := PodResult{Namespace: p.Namespace, Name: p.Name}
	if reason := skipReason(p); reason != "" {
		res.Reason = reason
		r.Skipped = append(r.Skipped, res)
		return
	}
	err := cs.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
	switch {
	case err == nil:
		r.Evicted = append(r.Evicted, res)
	case apierrors.IsNotFound(err):
		// Gone meanwhile: what a drain wanted.
		r.Evicted = append(r.Evicted, res)
	case apierrors.IsTooManyRequests(err):
		res.Reason = err.Error()
		r.Refused = append(r.Refused, res)
	default:
		res.Reason = err.Error()
		r.Failed = append(r.Failed, res)
	}
}

// skipReason says why a drain leaves p alone, or "".
func skipReason(p *corev1.Pod) string {
	if _, ok := p.Annotations[mirrorAnnotation]; ok {
		return "mirror pod of a static pod"
	}
	if c := metav1.GetControllerOf(p); c != nil && c.Kind == "DaemonSet" && strings.HasPrefix(c.APIVersion, "apps/") {
		return "DaemonSet pod"
	}
	if p.DeletionTimestamp != nil {
		return "already terminating"
	}
	return ""
}

// drainAction drains the node the action's path names.
func (s *Server) drainAction(w http.ResponseWriter, r *http.Request, path string) {
	node, ok := strings.CutPrefix(path, "/api/v1/nodes/")
	if !ok || node == "" || strings.Contains(node, "/") {
		writeStatus(w, http.StatusBadRequest, "drain takes a node's path, /api/v1/nodes/NAME")
		return
	}
	cs, err := kubernetes.NewForConfig(userConfig(r))
	if err != nil {
		writeError(w, err)
		return
	}
	report, err := drain(r.Context(), cs, node)
	if err != nil {
		writeError(w, err)
		return
	}
	s.Log.Info("Drained node", "node", node, "evicted", len(report.Evicted), "skipped", len(report.Skipped), "refused", len(report.Refused), "failed", len(report.Failed))
	writeJSON(w, http.StatusOK, report)
}
