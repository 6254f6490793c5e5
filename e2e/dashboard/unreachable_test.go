package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/e2e/internal/browser"
)

// offline cuts the page off from every server (on) or puts it back.
func offline(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var rules []*network.Conditions
		if on {
			rules = []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
		}
		_, err := cdp.Call(ctx, t, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: rules})
		return err
	})
}

// TestUnreachable: a list read that cannot reach the console is tried
// again and shows once it can (Chromium drops the requests in flight
// whenever the host's network changes, as when other suites add veths);
// one that never reaches it says so on the page rather than leave it blank.
func TestUnreachable(t *testing.T) {
	ns := "unreachable"
	cs := newNamespace(t, ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-reach"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c, tab := viewerTab(t, cs, ns, "reach-viewer")
	browser.Run(t, tab, "network events on", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{})
		return err
	}))
	browser.Run(t, tab, "a list read while offline, then online",
		offline(true),
		// A change of the page's fragment: no load, the page's own reads.
		chromedp.Navigate(c.Base+"/#/list/v1/configmaps?ns="+ns),
		chromedp.Sleep(300*time.Millisecond),
		offline(false),
		browser.WaitText("#view", "cm-reach"),
	)
	browser.Run(t, tab, "a list read that never reaches the console",
		offline(true),
		chromedp.Navigate(c.Base+"/#/list/v1/services?ns="+ns),
		browser.WaitText("#view", "Unreachable: could not reach the console"),
		offline(false),
	)
}
