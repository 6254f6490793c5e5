package dashboard_test

import (
	"testing"

	"trireme.dev/e2e/internal/browser"
)

// TestOverviewForViewer: the view role may list pods and events but not
// nodes. The overview shows the refusal in its Nodes section and still
// counts the pods and lists the Warning events.
func TestOverviewForViewer(t *testing.T) {
	ns := "overview"
	cs := newNamespace(t, ns)
	c, tab := viewerTab(t, cs, ns, "overview-viewer")
	browser.Run(t, tab, "the overview",
		browser.Navigate(c.Base+"/#/overview"),
		browser.WaitText(`#view section[aria-label="Nodes"]`, `Forbidden: nodes is forbidden`),
		browser.WaitText(`#view section[aria-label="Pods"]`, "Pods ("),
		browser.WaitText(`#view section[aria-label="Recent Warning events"]`, "Reason"),
	)
}
