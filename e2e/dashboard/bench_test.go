package dashboard_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testwait"
	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
	"trireme.dev/e2e/internal/kwok"
	"trireme.dev/e2e/internal/load"
)

// BenchmarkDashboard5000Pods measures the console with 5,000 pods in the
// cluster, Running on 50 kwok nodes as in the scale harness (e2e/scale):
// navigation to the all-namespaces pod list's first row in the DOM and
// until every page of it is painted, the DOM's size then, a created pod's
// row visible in the list (p50 and p99 of 50), the console's RSS and the
// page's JS heap, and the overview's pod count.
// Issue 27's targets: painted under 1 s, row p99 under 1 s, RSS under
// 100 MiB.
func BenchmarkDashboard5000Pods(b *testing.B) {
	const nodes, pods, creates = 50, 5000, 50
	ns := "bench"
	cs := newNamespace(b, ns)
	kwokLog := startKwok(b)
	makeObjects(b, cs, ns, "bench-node", nodes, pods)
	// The clock covers the console only: the pods are all Running, their
	// statuses written, before it starts, so that kwok's updates neither
	// load the machine nor change the list while it is measured.
	start := time.Now()
	if err := (testwait.Poll{Interval: time.Second}).Until(b.Context(), 10*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := kwok.RunningPods(ctx, cs, ns)
		return n >= pods, err
	}); err != nil {
		b.Fatalf("%d pods Running on kwok's nodes: %v\nkwok's output (last lines):\n%s", pods, err, testcluster.Tail(kwokLog.String(), 30))
	}
	b.Logf("%d pods Running on kwok's nodes %s after the last was created", pods, time.Since(start).Round(time.Millisecond))
	c, tab := viewerTab(b, cs, ns, "bench-viewer")

	// The first row's time is taken by an observer DevTools adds to every
	// new document, so the page carries no probe of its own.
	browser.Run(b, tab, "first-row probe", firstRowProbe)
	var firstRow, painted []float64
	for b.Loop() {
		// A full load: the page's clock starts at the navigation.
		var ms string
		var first float64
		browser.Run(b, tab, "load the pod list",
			browser.Navigate("about:blank"),
			browser.Navigate(c.Base+"/#/list/v1/pods"),
			browser.WaitTrue(`!!document.body.dataset.listPainted`, "the pod list was never painted"),
			browser.WaitTrue(fmt.Sprintf(`parseInt((document.querySelector('#view').innerText.match(/(\d+) pods/) || [])[1]) >= %d`, pods), "the list does not count every pod"),
			browser.Into(chromedp.Evaluate[string](`document.body.dataset.listPainted`), &ms),
			browser.Into(chromedp.Evaluate[float64](`window.firstRowAt || 0`), &first),
		)
		v, err := strconv.ParseFloat(ms, 64)
		if err != nil {
			b.Fatalf("listPainted %q: %v", ms, err)
		}
		if first <= 0 {
			b.Fatal("no first row was seen by the probe")
		}
		painted = append(painted, v)
		firstRow = append(firstRow, first)
	}
	b.StopTimer()
	b.ReportMetric(mean(firstRow), "first-row-ms")
	b.ReportMetric(mean(painted), "painted-ms")
	// Virtualized, the page holds a window of rows, not 5,000.
	var rowsInDOM, nodesInDOM float64
	browser.Run(b, tab, "count the DOM",
		browser.Into(chromedp.Evaluate[float64](`document.querySelectorAll('#view tr').length`), &rowsInDOM),
		browser.Into(chromedp.Evaluate[float64](`document.getElementsByTagName('*').length`), &nodesInDOM),
	)
	b.ReportMetric(rowsInDOM, "dom-rows")
	b.ReportMetric(nodesInDOM, "dom-elements")

	// Each new pod's row, at the end of the list scrolled to its end, is
	// timed by the page on the host's clock (Date.now) against the time
	// the create was sent.
	browser.Run(b, tab, "watch for rows",
		browser.Eval(`(() => {
			window.pending = new Set(); window.seen = {};
			const check = () => {
				for (const n of window.pending) if (document.querySelector('tr[data-name="' + n + '"]')) { window.seen[n] = Date.now(); window.pending.delete(n); }
				requestAnimationFrame(check);
			};
			check();
		})()`),
	)
	var delays []time.Duration
	for i := range creates {
		name := fmt.Sprintf("late-%02d", i)
		browser.Run(b, tab, "scroll to the end",
			browser.Eval(`(() => { const s = document.querySelector('.scroller'); s.scrollTop = s.scrollHeight; window.pending.add('`+name+`'); })()`))
		sent := time.Now().UnixMilli()
		// Spread over the nodes, as the first 5,000 are, to stay within
		// each node's 110 pods.
		if _, err := cs.CoreV1().Pods(ns).Create(b.Context(), benchPod(name, nodeName("bench-node", i%nodes)), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		var seen int64
		// The tab's context, not the poll's: chromedp runs in the tab.
		testwait.For(b, 30*time.Second, name+"'s row", func(context.Context) (bool, error) {
			err := chromedp.Do(tab, browser.Into(chromedp.Evaluate[int64](`window.seen['`+name+`'] || 0`), &seen))
			return seen > 0, err
		})
		delays = append(delays, time.Duration(seen-sent)*time.Millisecond)
	}
	slices.Sort(delays)
	b.ReportMetric(float64(load.Percentile(delays, 50).Milliseconds()), "row-p50-ms")
	b.ReportMetric(float64(load.Percentile(delays, 99).Milliseconds()), "row-p99-ms")

	var heap float64
	browser.Run(b, tab, "JS heap", browser.Into(chromedp.Evaluate[float64](`performance.memory.usedJSHeapSize`), &heap))
	b.ReportMetric(heap/(1<<20), "js-heap-MiB")
	mem, err := load.ReadMemory(c.PID())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(mem.RSS)/(1<<20), "console-rss-MiB")

	// The overview, the page a sign-in lands on, counts the pods by phase
	// (for information: it has no target of its own). The page's clock
	// notes the first frame with every pod counted. It lists nodes too,
	// which the view role does not allow: an admin reads it.
	admin := console.Token(b, cs, ns, "bench-admin", "cluster-admin")
	var overview float64
	browser.Run(b, tab, "sign in as an admin",
		chromedp.Click(chromedp.CSS("#signout")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		browser.SignIn(c.Base, admin, "system:serviceaccount:"+ns+":bench-admin"),
	)
	browser.Run(b, tab, "the overview",
		browser.Navigate("about:blank"),
		browser.Navigate(c.Base+"/#/overview"),
		browser.Into(chromedp.Evaluate[float64](fmt.Sprintf(`new Promise(done => {
			const check = () => parseInt((document.querySelector('#view').innerText.match(/Pods \((\d+)\)/) || [])[1]) >= %d
				? done(performance.now()) : requestAnimationFrame(check);
			check();
		})`, pods+creates), chromedp.EvalAwaitPromise), &overview),
	)
	b.ReportMetric(overview, "overview-ms")
}

// firstRowProbe has every new document note (window.firstRowAt, on the
// page's clock, which starts at the navigation) the first frame in which a
// list row is in the DOM.
var firstRowProbe = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
		const check = () => {
			if (document.querySelector('#view tr[data-name]')) window.firstRowAt = performance.now();
			else requestAnimationFrame(check);
		};
		requestAnimationFrame(check);
	})()`})
	return err
})

// startKwok runs kwok against the suite's apiserver until the test ends,
// when it is stopped by its PID, and returns the tail of its output.
func startKwok(tb testing.TB) *testcluster.TailBuffer {
	tb.Helper()
	bin := kwok.DefaultBinary()
	stages, err := kwok.Locate(bin)
	if err != nil {
		tb.Fatal(err)
	}
	out := testcluster.NewTailBuffer(64 << 10)
	p, err := kwok.Start(kwok.Options{Binary: bin, Stages: stages, Kubeconfig: srv.KubeconfigPath(), Dir: tb.TempDir(), Out: out})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := p.Stop(testcluster.DefaultStopTimeout); err != nil {
			tb.Errorf("stop kwok: %v", err)
		}
	})
	return out
}

// nodeName is makeObjects' i-th node after prefix.
func nodeName(prefix string, i int) string { return fmt.Sprintf("%s-%02d", prefix, i) }

// makeObjects makes nodes kwok Nodes (nodeName(prefix, 0), …) and pods
// pods named pod-0000, pod-0001, … bound to them in ns, 32 at a time. The
// nodes turn Ready and the pods Running while kwok runs (startKwok); without
// it they are API objects nothing runs.
func makeObjects(b testing.TB, cs kubernetes.Interface, ns, prefix string, nodes, pods int) {
	b.Helper()
	ctx := b.Context()
	for i := range nodes {
		name := nodeName(prefix, i)
		if _, err := cs.CoreV1().Nodes().Create(ctx, kwok.Node(name), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	work := make(chan int)
	errs := make(chan error, 32)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range work {
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, benchPod(fmt.Sprintf("pod-%04d", i), nodeName(prefix, i%nodes)), metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range pods {
		select {
		case work <- i:
		case err := <-errs:
			close(work)
			wg.Wait()
			b.Fatal(err)
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// benchPod is a pod bound to node, which kwok runs if it manages node.
func benchPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}},
		Spec: corev1.PodSpec{NodeName: node, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
	}
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
