package dashboard_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

// violation is one axe-core rule a page breaks.
type violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeRun injects axe-core (testdata, never served by the dashboard: the
// page's CSP would refuse it, DevTools' evaluation is not bound by it) and
// returns the page's violations.
func axeRun(t *testing.T, found *[]violation) chromedp.Action[chromedp.Void] {
	src, err := os.ReadFile("testdata/axe-core/axe.min.js")
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	const run = `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
		.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))})))`
	return chromedp.Steps(
		browser.Eval(`window.axe || (function(){`+string(src)+`}).call(window)`),
		browser.Into(chromedp.Evaluate[[]violation](run, chromedp.EvalAwaitPromise), found),
	)
}

// TestAccessibility runs axe-core on the console's main pages and fails
// on any serious or critical violation.
func TestAccessibility(t *testing.T) {
	ns := "a11y"
	cs := newNamespace(t, ns)
	ctx := t.Context()
	labels := map[string]string{"app": "web", "note": "x"}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/web:1"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "solo"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/solo:1"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a11y-node"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := console.Token(t, cs, ns, "reader", "cluster-admin")
	base := console.Start(t, srv.KubeconfigPath())
	tab := browser.New(t)

	pages := []struct {
		name, hash, sel, want string
	}{
		{"sign-in", "", "#signin", "Bearer token"},
		{"overview", "#/overview", "#view", "Recent Warning events"},
		{"pods", "#/list/v1/pods?ns=" + ns, "#view", "solo"},
		{"deployments", "#/list/apps/v1/deployments", "#view", "web"},
		{"deployment", "#/obj/apis/apps/v1/namespaces/" + ns + "/deployments/web", "#workload-pods", "2 pods"},
		{"pod", "#/obj/api/v1/namespaces/" + ns + "/pods/solo", "#view", "Open terminal"},
		{"nodes", "#/list/v1/nodes", "#view", "a11y-node"},
		{"node", "#/obj/api/v1/nodes/a11y-node", "#node-pods", "pod"},
		{"secrets", "#/list/v1/secrets", "#view", "secrets"},
		{"custom resources", "#/crds", "#view", "Custom resources"},
	}
	var failures []string
	for _, p := range pages {
		var found []violation
		steps := []chromedp.Action[chromedp.Void]{}
		if p.hash == "" {
			steps = append(steps, chromedp.Navigate(base+"/"))
		} else {
			steps = append(steps, chromedp.Navigate(base+"/"+p.hash))
		}
		steps = append(steps, browser.WaitText(p.sel, p.want), axeRun(t, &found))
		browser.Run(t, tab, p.name, steps...)
		for _, v := range found {
			if v.Impact != "serious" && v.Impact != "critical" {
				t.Logf("%s: %s (%s) %s at %s", p.name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, ", "))
				continue
			}
			failures = append(failures, fmt.Sprintf("%s: %s (%s) %s at %s", p.name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, ", ")))
		}
		if p.hash == "" {
			browser.Run(t, tab, "sign in", browser.SignIn(base, token, "system:serviceaccount:"+ns+":reader"))
		}
	}
	if len(failures) > 0 {
		t.Errorf("axe-core found %d serious or critical violations:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}
