package controllermanager_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

func webDeployment(name string, replicas int32, image string, surge, unavailable int) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge:       ptr.To(intstr.FromInt32(int32(surge))),
					MaxUnavailable: ptr.To(intstr.FromInt32(int32(unavailable))),
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}

// bounds tracks, in watch order, the most pods and the fewest ready pods a
// namespace had once it first reached its full ready count.
type bounds struct {
	mu       sync.Mutex
	want     int
	started  bool
	maxPods  int
	minReady int
}

func (b *bounds) observe(pods []*corev1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	total, ready := 0, 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		total++
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if !b.started {
		if ready < b.want {
			return
		}
		b.started, b.minReady = true, ready
	}
	b.maxPods = max(b.maxPods, total)
	b.minReady = min(b.minReady, ready)
}

func TestDeploymentRollingUpdateAndUndo(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "deploy-roll")
	ctx := context.Background()
	const replicas, surge, unavailable = 10, 2, 1
	b := &bounds{want: replicas}
	startKubelet(t, cs, ns, running, b.observe)

	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, webDeployment("web", replicas, "registry.example/web:a", surge, unavailable), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rolloutStatus(t, ns, "deployment/web")

	kubectl(t, "-n", ns, "set", "image", "deployment/web", "web=registry.example/web:b")
	rolloutStatus(t, ns, "deployment/web")
	b.mu.Lock()
	maxPods, minReady := b.maxPods, b.minReady
	b.mu.Unlock()
	t.Logf("rollout a→b: at most %d pods, at least %d ready", maxPods, minReady)
	if maxPods > replicas+surge {
		t.Errorf("rollout had %d pods at once, more than replicas+maxSurge = %d", maxPods, replicas+surge)
	}
	if minReady < replicas-unavailable {
		t.Errorf("rollout had only %d ready pods, fewer than replicas-maxUnavailable = %d", minReady, replicas-unavailable)
	}
	wantImages(t, ns, "app=web", "registry.example/web:b", replicas)

	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Annotations["deployment.kubernetes.io/revision"]; got != "2" {
		t.Errorf("revision annotation = %q, want 2", got)
	}
	for _, c := range []struct{ typ, status, reason string }{
		{"Available", "True", "MinimumReplicasAvailable"},
		{"Progressing", "True", "NewReplicaSetAvailable"},
	} {
		if !hasDeploymentCondition(d, c.typ, c.status, c.reason) {
			t.Errorf("deployment lacks condition %s=%s (%s): %+v", c.typ, c.status, c.reason, d.Status.Conditions)
		}
	}
	hist := kubectl(t, "-n", ns, "rollout", "history", "deployment/web").Stdout
	if !strings.Contains(hist, "1  ") || !strings.Contains(hist, "2  ") {
		t.Errorf("rollout history lacks revisions 1 and 2:\n%s", hist)
	}
	kubectl(t, "-n", ns, "rollout", "undo", "deployment/web")
	rolloutStatus(t, ns, "deployment/web")
	wantImages(t, ns, "app=web", "registry.example/web:a", replicas)
	d, err = cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Annotations["deployment.kubernetes.io/revision"]; got != "3" {
		t.Errorf("revision after undo = %q, want 3", got)
	}
	kubectl(t, "-n", ns, "wait", "--for=condition=Available", "deployment/web", "--timeout=30s")
}

func TestDeploymentRecreatePauseAndScale(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "deploy-recreate")
	ctx := context.Background()
	startKubelet(t, cs, ns, running, nil)
	d := webDeployment("db", 3, "registry.example/db:1", 0, 0)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rolloutStatus(t, ns, "deployment/db")
	kubectl(t, "-n", ns, "rollout", "pause", "deployment/db")
	kubectl(t, "-n", ns, "set", "image", "deployment/db", "web=registry.example/db:2")
	kubectl(t, "-n", ns, "scale", "deployment/db", "--replicas=5")
	testwait.For(t, 30*time.Second, "paused deployment to scale to 5 on the old image", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.AvailableReplicas == 5 && hasDeploymentCondition(d, "Progressing", "Unknown", "DeploymentPaused"), nil
	})
	wantImages(t, ns, "app=db", "registry.example/db:1", 5)
	kubectl(t, "-n", ns, "rollout", "resume", "deployment/db")
	rolloutStatus(t, ns, "deployment/db")
	wantImages(t, ns, "app=db", "registry.example/db:2", 5)
}

func rolloutStatus(t *testing.T, ns, obj string) {
	t.Helper()
	res := srv.Kubectl(t, "-n", ns, "rollout", "status", obj, "--timeout=60s")
	if res.ExitCode != 0 {
		dump(t, ns)
		t.Fatalf("kubectl rollout status %s: %s", obj, res)
	}
}

// dump logs the namespace's workload objects and events.
func dump(t *testing.T, ns string) {
	t.Helper()
	for _, args := range [][]string{
		{"get", "deploy,rs,sts,ds,job,cronjob,pods,pvc,controllerrevisions", "-o", "wide"},
		{"get", "events", "--sort-by=.lastTimestamp"},
	} {
		res := srv.Kubectl(t, append([]string{"-n", ns}, args...)...)
		t.Logf("kubectl %v:\n%s%s", args, res.Stdout, res.Stderr)
	}
}

func wantImages(t *testing.T, ns, selector, image string, n int) {
	t.Helper()
	testwait.For(t, 30*time.Second, "pods of "+selector+" to run "+image, func(ctx context.Context) (bool, error) {
		pods, err := srv.Clientset(t).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		count := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			if p.Spec.Containers[0].Image != image {
				return false, nil
			}
			count++
		}
		return count == n, nil
	})
}

func hasDeploymentCondition(d *appsv1.Deployment, typ, status, reason string) bool {
	for _, c := range d.Status.Conditions {
		if string(c.Type) == typ && string(c.Status) == status && c.Reason == reason {
			return true
		}
	}
	return false
}

// TestDeploymentForegroundDeletion deletes a rolled-out Deployment with
// kubectl --cascade=foreground: it stays, marked for deletion, while its
// ReplicaSet and that ReplicaSet's pods remain, and goes only once they are
// gone. One pod holds a finalizer of the test's, so the chain is caught
// part way.
func TestDeploymentForegroundDeletion(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "deploy-fg")
	ctx := context.Background()
	startKubelet(t, cs, ns, running, nil)
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, webDeployment("web", 3, "registry.example/web:a", 1, 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rolloutStatus(t, ns, "deployment/web")
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("%d pods after rollout, want 3", len(pods.Items))
	}
	held := pods.Items[0].Name
	const hold = "e2e.trireme.dev/hold"
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, held, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":["`+hold+`"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// A failed test must not leave the namespace stuck on the finalizer.
	t.Cleanup(func() { dropPodFinalizers(t, cs, ns, held) })

	kubectl(t, "-n", ns, "delete", "deployment", "web", "--cascade=foreground", "--wait=false")
	waitForIn(t, ns, gcTimeout, "the held pod to be deleted and the others to go", func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 1 && pods.Items[0].Name == held && pods.Items[0].DeletionTimestamp != nil, nil
	})
	// The pod is the bottom of the chain: while it stays, so must the
	// ReplicaSet and the Deployment, both waiting for their dependents.
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("deployment gone while its pod %s remains: %v", held, err)
	}
	if d.DeletionTimestamp == nil || !contains(d.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("deployment: deletionTimestamp %v finalizers %v, want foreground deletion in progress", d.DeletionTimestamp, d.Finalizers)
	}
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 1 {
		t.Fatalf("%d ReplicaSets while the held pod remains, want the deployment's one", len(rss.Items))
	}
	if rs := rss.Items[0]; rs.DeletionTimestamp == nil || !contains(rs.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("replicaset %s: deletionTimestamp %v finalizers %v, want foreground deletion in progress", rs.Name, rs.DeletionTimestamp, rs.Finalizers)
	}

	dropPodFinalizers(t, cs, ns, held)
	waitForIn(t, ns, gcTimeout, "the deployment to go", func(ctx context.Context) (bool, error) {
		_, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	// Foreground means the owner goes last: nothing it owned may outlive it.
	rss, err = cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err = cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 0 || len(pods.Items) != 0 {
		t.Errorf("deployment deleted before its dependents: %d ReplicaSets and %d pods remain", len(rss.Items), len(pods.Items))
	}
}

// dropPodFinalizers removes every finalizer of a pod.
func dropPodFinalizers(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	_, err := cs.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("drop finalizers of pod %s: %v", name, err)
	}
}
