package dashboard_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
	c, tab := viewerTab(t, cs, ns, "overview-viewer")
	// The counts are the whole cluster's, which other tests' pods change
	// meanwhile (evicted from fake nodes that never report): a look counts
	// only when the API held the same pods before and after the page drew.
	for try := 1; ; try++ {
		before := podPhases(t, cs)
		var text string
		browser.Run(t, tab, "the overview",
			browser.Navigate(c.Base+"/#/overview"),
			chromedp.Reload(),
			browser.WaitText(`#view section[aria-label="Nodes"]`, `Forbidden: nodes is forbidden`),
			browser.WaitText(`#view section[aria-label="Pods"]`, "Phase"),
			browser.WaitText(`#view section[aria-label="Recent Warning events"]`, "Reason"),
			browser.Into(chromedp.Evaluate[string](`document.querySelector('#view section[aria-label="Pods"]').innerText`), &text),
		)
		if after := podPhases(t, cs); !maps.Equal(before, after) && try < 5 {
			continue
		}
		total := 0
		for _, n := range before {
			total += n
		}
		for _, want := range []string{fmt.Sprintf("Pods (%d)", total), fmt.Sprintf("Running\t%d", before[corev1.PodRunning]), fmt.Sprintf("Pending\t%d", before[corev1.PodPending])} {
			if !strings.Contains(text, want) {
				t.Errorf("the overview's Pods section shows %q, want %q in it", text, want)
			}
		}
		return
	}
}

// podPhases counts the cluster's pods by phase.
func podPhases(t *testing.T, cs kubernetes.Interface) map[corev1.PodPhase]int {
	t.Helper()
	all, err := cs.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	phases := map[corev1.PodPhase]int{}
	for _, p := range all.Items {
		phases[p.Status.Phase]++
	}
	return phases
}
