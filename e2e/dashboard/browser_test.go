package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// newChromium starts a fresh headless Chromium (its own profile, nothing
// that reaches the network on its own) and returns a tab context.
func newChromium(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (hack/install-deps.sh installs it): %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// waitText waits until the element sel's text contains want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	expr := fmt.Sprintf(`(document.querySelector(%q)?.innerText || "").includes(%q)`, sel, want)
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		// Evaluate in a loop rather than Poll: a navigation (sign-in reloads
		// the page) destroys the execution context a Poll runs in.
		deadline := time.Now().Add(20 * time.Second)
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, target)
			if err == nil && ok {
				return nil
			}
			if time.Now().After(deadline) {
				text, _ := chromedp.Evaluate[string](`document.body.innerText`)(ctx, target)
				return fmt.Errorf("%s never showed %q (last error %v); page text:\n%s", sel, want, err, text)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// shot saves a screenshot of the page under the test's artifact dir.
func shot(t *testing.T, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, target)
		if err != nil {
			return fmt.Errorf("screenshot %s: %w", name, err)
		}
		p := filepath.Join(t.ArtifactDir(), name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			return fmt.Errorf("write screenshot: %w", err)
		}
		t.Logf("screenshot %s", p)
		return nil
	})
}

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
	admin := userToken(t, cs, ns, "browser-admin", "cluster-admin")
	base := startDashboard(t)
	tab := newChromium(t)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		rctx, cancel := context.WithTimeout(tab, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(rctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	run("sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), admin),
		chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
		waitText("#who", "system:serviceaccount:"+ns+":browser-admin"),
	)
	run("deployments list",
		chromedp.Navigate(base+"/#/list/apps/v1/deployments"),
		waitText("#view", "shop"),
		shot(t, "deployments"),
	)
	run("pods list",
		chromedp.Navigate(base+"/#/list/v1/pods"),
		waitText("#view", "shop-pod"),
		shot(t, "pods"),
	)
	run("sign out",
		chromedp.Click(chromedp.CSS("#signout")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
	)
}
