package dashboard_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/e2e/internal/browser"
)

// TestOverviewForViewer: the view role may list pods and events but not
// nodes. The overview shows the refusal in its Nodes section and still
// counts the pods by phase, as the API has them, and lists the Warning
// events.
func TestOverviewForViewer(t *testing.T) {
	ns := "overview"
	cs := newNamespace(t, ns)
	makeObjects(t, cs, ns, "overview-node", 1, 3)
	running, err := cs.CoreV1().Pods(ns).Get(t.Context(), "pod-0000", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	running.Status.Phase = corev1.PodRunning
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(t.Context(), running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	all, err := cs.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	phases := map[corev1.PodPhase]int{}
	for _, p := range all.Items {
		phases[p.Status.Phase]++
	}

	c, tab := viewerTab(t, cs, ns, "overview-viewer")
	browser.Run(t, tab, "the overview",
		browser.Navigate(c.Base+"/#/overview"),
		browser.WaitText(`#view section[aria-label="Nodes"]`, `Forbidden: nodes is forbidden`),
		browser.WaitText(`#view section[aria-label="Pods"]`, fmt.Sprintf("Pods (%d)", len(all.Items))),
		browser.WaitText(`#view section[aria-label="Pods"]`, fmt.Sprintf("Running\t%d", phases[corev1.PodRunning])),
		browser.WaitText(`#view section[aria-label="Pods"]`, fmt.Sprintf("Pending\t%d", phases[corev1.PodPending])),
		browser.WaitText(`#view section[aria-label="Recent Warning events"]`, "Reason"),
	)
}
