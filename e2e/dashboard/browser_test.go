package dashboard_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

// TestBrowser drives the page in real headless Chromium: sign in with a
// ServiceAccount token, see a deployment and its pods, sign out.
func TestBrowser(t *testing.T) {
	cs, err := kubernetes.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := "browser"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "shop"}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/shop:1"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No controller-manager runs here to make the namespace's default ServiceAccount.
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
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

	run("sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), admin),
		chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
		browser.WaitText("#who", "system:serviceaccount:"+ns+":browser-admin"),
	)
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
