package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

// TestBrowser drives the page in real headless Chromium: sign in with a
// ServiceAccount token, see a deployment and its pods, sign out.
func TestBrowser(t *testing.T) {
	ns := "browser"
	cs := newNamespace(t, ns)
	ctx := t.Context()
	labels := map[string]string{"app": "shop"}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/shop:1"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-pod"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/shop:1"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	admin := console.Token(t, cs, ns, "browser-admin", "cluster-admin")
	base := console.Start(t, srv.KubeconfigPath())
	tab := browser.New(t)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		browser.Run(t, tab, what, actions...)
	}

	run("sign in", browser.SignIn(base, admin, "system:serviceaccount:"+ns+":browser-admin"))
	run("deployments list",
		chromedp.Navigate(base+"/#/list/apps/v1/deployments"),
		browser.WaitText("#view", "shop"),
		browser.Shot(t, "deployments"),
	)
	run("pods list",
		chromedp.Navigate(base+"/#/list/v1/pods"),
		browser.WaitText("#view", "shop-pod"),
		browser.Shot(t, "pods"),
	)
	run("sign out",
		chromedp.Click(chromedp.CSS("#signout")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
	)
}

// TestScaleFollowsPods scales a Deployment from its page and sees its
// ReplicaSet and pods follow in the page from the watches alone: no list
// is fetched again between the click and the counts.
func TestScaleFollowsPods(t *testing.T) {
	ns := "scale"
	cs := newNamespace(t, ns)
	labels := map[string]string{"app": "web"}
	if _, err := cs.AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/web:1"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := console.Token(t, cs, ns, "scaler", "cluster-admin")
	base := console.Start(t, srv.KubeconfigPath())
	tab := browser.New(t)
	counts := func(pods, rollout string) chromedp.Action[chromedp.Void] {
		return browser.WaitTrue(fmt.Sprintf(`document.querySelector('#workload-pods .count')?.textContent === %q && document.querySelector('#rollout').textContent.startsWith(%q)`, pods, rollout),
			fmt.Sprintf("the page never showed %s and %q", pods, rollout))
	}
	// The page's GETs of /api/k8s (lists and objects) so far.
	const gets = `performance.getEntriesByType('resource').filter(e => e.name.includes('/api/k8s/')).length`

	browser.Run(t, tab, "sign in", browser.SignIn(base, token, "system:serviceaccount:"+ns+":scaler"))
	var before, after int
	browser.Run(t, tab, "deployment page",
		chromedp.Navigate(base+"/#/obj/apis/apps/v1/namespaces/"+ns+"/deployments/web"),
		browser.WaitText("#workload-replicasets", "1 ReplicaSet"),
		counts("1 pod", "Desired 1"),
		browser.Into(chromedp.Evaluate[int](gets), &before),
	)
	for _, n := range []struct {
		replicas      string
		pods, rollout string
	}{{"3", "3 pods", "Desired 3, current 3"}, {"0", "0 pods", "Desired 0, current 0"}} {
		browser.Run(t, tab, "scale to "+n.replicas,
			chromedp.SetValue(chromedp.CSS("#replicas"), n.replicas),
			chromedp.Click(chromedp.CSS(`button[data-action="scale"]`)),
			counts(n.pods, n.rollout),
			browser.WaitTrue(fmt.Sprintf(`[...document.querySelectorAll('#workload-replicasets td')].map(td => td.textContent)[1] === %q`, n.replicas),
				"the ReplicaSet's desired count never followed"),
			browser.Shot(t, "scaled-to-"+n.replicas),
		)
	}
	browser.Run(t, tab, "count GETs", browser.Into(chromedp.Evaluate[int](gets), &after))
	if after != before {
		t.Errorf("the page fetched %d more times after the scale: it should follow from its watches", after-before)
	}
}
