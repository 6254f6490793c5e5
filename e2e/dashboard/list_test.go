package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/e2e/internal/browser"
)

// focusedRow is the data-name of the row whose link has focus, "" when
// focus is elsewhere.
const focusedRow = `document.activeElement?.closest('#view tr')?.dataset.name || ''`

// rowInView checks that the focused row is the one link in the list's tab
// order and lies wholly in the scroller, below its sticky header.
const rowInView = `(() => {
	const a = document.activeElement, s = document.querySelector('.scroller');
	const tabbable = document.querySelectorAll('#view table a[tabindex="0"]');
	if (tabbable.length !== 1 || tabbable[0] !== a) return false;
	const r = a.closest('tr').getBoundingClientRect(), v = s.getBoundingClientRect();
	const head = s.querySelector('th').getBoundingClientRect().height;
	return r.top >= v.top + head - 1 && r.bottom <= v.top + s.clientHeight + 1;
})()`

// TestPodListKeyboard reads 300 pods into the pod list and moves through
// it from the keyboard: the DOM holds a window of rows, the keys reach
// every row and scroll it into view, focus stays on its row through the
// watch's repaints, and Tab leaves the list.
func TestPodListKeyboard(t *testing.T) {
	const pods = 300
	ns := "vlist"
	cs := newNamespace(t, ns)
	makeObjects(t, cs, ns, "vlist-node", 3, pods)
	c, tab := viewerTab(t, cs, ns, "vlist-viewer")
	browser.Run(t, tab, "the pod list",
		browser.Navigate(c.Base+"/#/list/v1/pods?ns="+ns),
		browser.WaitText("#view", fmt.Sprintf("%d pods", pods)),
	)
	var drawn, rowCount int
	browser.Run(t, tab, "count the rows drawn",
		browser.Into(chromedp.Evaluate[int](`document.querySelectorAll('#view tr[data-name]').length`), &drawn),
		browser.Into(chromedp.Evaluate[int](`+document.querySelector('#view table').getAttribute('aria-rowcount')`), &rowCount),
	)
	if drawn == 0 || drawn > 80 {
		t.Fatalf("%d of %d rows in the DOM, want a window of them", drawn, pods)
	}
	if rowCount != pods+1 {
		t.Fatalf("aria-rowcount %d, want %d (the rows and the header)", rowCount, pods+1)
	}

	browser.Run(t, tab, "focus the first row", chromedp.Focus(chromedp.CSS(`#view tr[data-name="pod-0000"] a`)))
	for _, step := range []struct{ key, want string }{
		{kb.ArrowDown, "pod-0001"},
		{kb.ArrowDown, "pod-0002"},
		{kb.ArrowUp, "pod-0001"},
		{kb.End, "pod-0299"},
		{kb.ArrowUp, "pod-0298"},
		{kb.Home, "pod-0000"},
		{kb.PageDown, ""}, // a page down: checked below
	} {
		var name string
		var inView bool
		browser.Run(t, tab, "key "+step.want,
			chromedp.KeyEvent(step.key),
			browser.Into(chromedp.Evaluate[string](focusedRow), &name),
			browser.Into(chromedp.Evaluate[bool](rowInView), &inView),
		)
		if step.want == "" {
			var n int
			if _, err := fmt.Sscanf(name, "pod-%d", &n); err != nil || n < 5 || n > 60 {
				t.Fatalf("Page Down from pod-0000 focused %q, want a row a page down", name)
			}
		} else if name != step.want {
			t.Fatalf("focus on %q, want %q", name, step.want)
		}
		if !inView {
			t.Fatalf("the focused row %q is not the one tabbable link, in view", name)
		}
	}

	// The watch repaints the list: the focused row changed, its neighbour
	// deleted, a pod added. Focus stays on its row, the keys follow the
	// new order.
	browser.Run(t, tab, "focus pod-0001",
		chromedp.KeyEvent(kb.Home), chromedp.KeyEvent(kb.ArrowDown),
		browser.Eval(`document.querySelector('#view tr[data-name="pod-0001"]').dataset.old = '1'`),
	)
	ctx := t.Context()
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "pod-0001", types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "pod-0002", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, benchPod("pod-added", nodeName("vlist-node", 0)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var name string
	browser.Run(t, tab, "the watch's changes",
		browser.WaitTrue(`(() => { const r = document.querySelector('#view tr[data-name="pod-0001"]'); return !!r && !r.dataset.old; })()`, "pod-0001's row was never drawn again"),
		browser.WaitTrue(`!document.querySelector('#view tr[data-name="pod-0002"]')`, "pod-0002's row stayed"),
		browser.WaitText("#view", fmt.Sprintf("%d pods", pods)),
		browser.Into(chromedp.Evaluate[string](focusedRow), &name),
	)
	if name != "pod-0001" {
		t.Fatalf("after the watch's repaints focus is on %q, want pod-0001", name)
	}
	browser.Run(t, tab, "down past the deleted row",
		chromedp.KeyEvent(kb.ArrowDown),
		browser.Into(chromedp.Evaluate[string](focusedRow), &name),
	)
	if name != "pod-0003" {
		t.Fatalf("focus on %q, want pod-0003 (pod-0002 is gone)", name)
	}
	browser.Run(t, tab, "the added pod at the end",
		chromedp.KeyEvent(kb.End),
		browser.Into(chromedp.Evaluate[string](focusedRow), &name),
	)
	if name != "pod-added" {
		t.Fatalf("End focused %q, want pod-added", name)
	}

	// Scrolled away from the focused row, focus goes to the scroller, not
	// to the page's body; Tab from a row leaves the list.
	var onScroller, inTable bool
	browser.Run(t, tab, "scroll away",
		browser.Eval(`document.querySelector('.scroller').scrollTop = 0`),
		browser.WaitTrue(`!!document.querySelector('#view tr[data-name="pod-0000"]')`, "the top rows were never drawn"),
		browser.Into(chromedp.Evaluate[bool](`document.activeElement === document.querySelector('.scroller')`), &onScroller),
		browser.Shot(t, "pod-list-300"),
	)
	if !onScroller {
		t.Fatal("focus left the list when its row scrolled away")
	}
	browser.Run(t, tab, "tab out",
		chromedp.Focus(chromedp.CSS(`#view tr[data-name="pod-0000"] a`)),
		chromedp.KeyEvent(kb.Tab),
		browser.Into(chromedp.Evaluate[bool](`document.querySelector('#view table').contains(document.activeElement)`), &inTable),
	)
	if inTable {
		t.Fatal("Tab from a row moved to another row, want it to leave the list")
	}

	// A taller pane draws rows to its bottom with no scroll or watch event.
	browser.Run(t, tab, "a taller pane",
		browser.Eval(`document.querySelector('.scroller').style.height = '1500px'`),
		browser.WaitTrue(`(() => {
			const s = document.querySelector('.scroller'), rows = s.querySelectorAll('tr[data-name]');
			return rows.length > 0 && rows[rows.length - 1].getBoundingClientRect().bottom >= s.getBoundingClientRect().top + s.clientHeight;
		})()`, "the taller pane's bottom rows were never drawn"),
	)
}
