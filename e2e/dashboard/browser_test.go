package dashboard_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
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
	// The edit view still holds the page's first copy (1 replica): its dry
	// run must show that applying it would undo the scale.
	browser.Run(t, tab, "dry run of the stale copy",
		chromedp.Click(chromedp.CSS("#dryrun")),
		browser.WaitTrue(`(t => /^- +"replicas": 0,$/m.test(t) && /^\+ +"replicas": 1,$/m.test(t))(document.querySelector('[aria-label="Diff"]')?.innerText || '')`,
			"the dry run's diff never showed replicas going from 0 to 1"),
	)
	if d, err := cs.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 0 {
		t.Errorf("after a dry run: %v replicas, %v", d.Spec.Replicas, err)
	}
}

// TestSecretEditKeepsValues edits a Secret's labels in the edit view,
// where its values read as placeholders, and applies it: the labels change
// and the values stay what they were.
func TestSecretEditKeepsValues(t *testing.T) {
	ns := "secret-edit"
	cs := newNamespace(t, ns)
	want := map[string][]byte{"password": []byte("s3cret"), "user": []byte("admin")}
	if _, err := cs.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db"}, Data: want,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := console.Token(t, cs, ns, "editor", "cluster-admin")
	base := console.Start(t, srv.KubeconfigPath())
	tab := browser.New(t)
	browser.Run(t, tab, "sign in", browser.SignIn(base, token, "system:serviceaccount:"+ns+":editor"))
	browser.Run(t, tab, "edit the labels",
		chromedp.Navigate(base+"/#/obj/api/v1/namespaces/"+ns+"/secrets/db"),
		browser.WaitTrue(`(document.querySelector('#yaml')?.value || '').includes('"password": "(hidden)"')`,
			"the edit view never showed the Secret with its values hidden"),
		browser.Eval(`(a => { const o = JSON.parse(a.value); o.metadata.labels = {edited: 'yes'}; a.value = JSON.stringify(o, null, 2); })(document.querySelector('#yaml'))`),
		chromedp.Click(chromedp.CSS("#dryrun")),
		browser.WaitText("#apply:not([disabled])", "Apply"),
		chromedp.Click(chromedp.CSS("#apply")),
		browser.WaitTrue(`[...document.querySelectorAll('p')].some(p => p.textContent === 'Applied.')`, "the page never said Applied."),
	)
	got, err := cs.CoreV1().Secrets(ns).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["edited"] != "yes" {
		t.Errorf("labels after the apply: %v, want edited=yes", got.Labels)
	}
	if !reflect.DeepEqual(got.Data, want) {
		t.Errorf("data after the apply: %q, want %q", got.Data, want)
	}
}

// TestNodeCordonAndDrain lists a node's pods on its page, live; cordons
// and uncordons the node from there, then drains it: the pod that may go is evicted, the one a
// PodDisruptionBudget guards is refused and reported, the mirror pod is
// left alone.
func TestNodeCordonAndDrain(t *testing.T) {
	ns := "drain"
	cs := newNamespace(t, ns)
	ctx := t.Context()
	node := "worker-1"
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	// No kubelet runs: the pods tolerate the taints the node lifecycle
	// controller gives a silent node, and "guarded" is made Running and
	// Ready by hand so that its budget counts it.
	mkPod := func(name string, labels, annotations map[string]string) {
		t.Helper()
		p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
			Spec: corev1.PodSpec{NodeName: node, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("pod %s status: %v", name, err)
		}
	}
	mkPod("web", map[string]string{"app": "web"}, nil)
	mkPod("guarded", map[string]string{"app": "guarded"}, nil)
	mkPod("static-"+node, nil, map[string]string{"kubernetes.io/config.mirror": "0123"})
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := console.Token(t, cs, ns, "operator", "cluster-admin")
	base := console.Start(t, srv.KubeconfigPath())
	tab := browser.New(t)
	unschedulable := func() bool {
		t.Helper()
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n.Spec.Unschedulable
	}

	browser.Run(t, tab, "sign in", browser.SignIn(base, token, "system:serviceaccount:"+ns+":operator"))
	browser.Run(t, tab, "the node's pods",
		chromedp.Navigate(base+"/#/obj/api/v1/nodes/"+node),
		browser.WaitText("#node-pods", "3 pods"),
		browser.WaitText("#node-pods", "guarded"),
		browser.WaitText("#node-pods", "static-"+node),
	)
	// A pod bound later shows up from the watch, without a reload.
	mkPod("late", nil, nil)
	browser.Run(t, tab, "a pod bound later",
		browser.WaitText("#node-pods", "4 pods"),
		browser.WaitText("#node-pods", "late"),
		browser.Shot(t, "node-pods"),
	)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "late", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	browser.Run(t, tab, "cordon",
		browser.WaitText("#node-pods", "3 pods"),
		browser.WaitText("#node-state", "enabled"),
		chromedp.Click(chromedp.CSS(`button[data-action="cordon"]`)),
		browser.WaitText("#node-state", "cordoned"),
		browser.Shot(t, "node-cordoned"),
	)
	if !unschedulable() {
		t.Fatal("the page says cordoned, the node is schedulable")
	}
	browser.Run(t, tab, "uncordon",
		chromedp.Click(chromedp.CSS(`button[data-action="uncordon"]`)),
		browser.WaitText("#node-state", "enabled"),
	)
	if unschedulable() {
		t.Fatal("the page says uncordoned, the node is unschedulable")
	}
	// The budget's status must count "guarded" before a drain can be
	// refused for it rather than for a budget not yet observed.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "guarded", metav1.GetOptions{})
		return err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1, nil
	}); err != nil {
		t.Fatalf("the budget never counted its pod: %v", err)
	}
	browser.Run(t, tab, "drain",
		// The page asks before draining.
		browser.Eval(`window.confirm = () => true`),
		chromedp.Click(chromedp.CSS(`button[data-action="drain"]`)),
		browser.WaitText("#drain-report", "1 evicted, 1 skipped, 1 refused by a PodDisruptionBudget, 0 failed"),
		browser.WaitText("#drain-report", ns+"/static-"+node+": mirror pod"),
		browser.WaitText("#drain-report", ns+"/guarded: Cannot evict pod"),
		browser.WaitText("#node-state", "cordoned"),
		browser.Shot(t, "node-drained"),
	)
	if !unschedulable() {
		t.Fatal("a drained node is schedulable")
	}
	for name, wantGoing := range map[string]bool{"web": true, "guarded": false, "static-" + node: false} {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		going := apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil)
		if going != wantGoing {
			t.Errorf("pod %s going %v, want %v (%v)", name, going, wantGoing, err)
		}
	}
}

// TestLostWatchReconnects stops the console under an open pod list: the
// page says its live updates are interrupted, and once the console is
// back it says so, shows the pod created meanwhile (a new list) and the
// one created after (the new watch).
func TestLostWatchReconnects(t *testing.T) {
	ns := "reconnect"
	cs := newNamespace(t, ns)
	mkPod := func(name string) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
	}
	mkPod("before")
	c, tab := viewerTab(t, cs, ns, "viewer")
	browser.Run(t, tab, "pod list",
		chromedp.Navigate(c.Base+"/#/list/v1/pods?ns="+ns),
		browser.WaitText("#view", "before"),
	)
	c.Stop(t)
	browser.Run(t, tab, "the watch is lost",
		browser.WaitText("#status", "Live updates interrupted"),
		browser.Shot(t, "watch-lost"),
	)
	mkPod("meanwhile")
	c.Start(t)
	browser.Run(t, tab, "reconnected",
		browser.WaitText("#status", "Live updates reconnected"),
		browser.WaitText("#view", "meanwhile"),
	)
	mkPod("after")
	browser.Run(t, tab, "watching again", browser.WaitText("#view", "after"))
}
