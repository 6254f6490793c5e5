package controllermanager_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/componentbase/testwait"
)

func typesUID(s string) types.UID { return types.UID(s) }

const gcTimeout = 30 * time.Second

// TestGCForegroundDeletion deletes an owner with kubectl
// --cascade=foreground: it stays, marked, while a blocking dependent (and
// that dependent's own dependent) remain, and goes only after them.
func TestGCForegroundDeletion(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "gc-fg")
	owner := configMap(t, cs, ns, "owner", nil)
	child := configMap(t, cs, ns, "child", []metav1.OwnerReference{ownerRef("v1", "ConfigMap", "owner", string(owner.UID), true)})
	// The grandchild holds a finalizer, so the chain must wait for it.
	configMap(t, cs, ns, "grandchild", []metav1.OwnerReference{ownerRef("v1", "ConfigMap", "child", string(child.UID), true)}, "e2e.trireme.dev/hold")

	res := srv.Kubectl(t, "-n", ns, "delete", "configmap", "owner", "--cascade=foreground", "--wait=false")
	if res.ExitCode != 0 {
		t.Fatalf("kubectl delete: %s", res)
	}
	testwait.For(t, gcTimeout, "grandchild marked for deletion", func(ctx context.Context) (bool, error) {
		g, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "grandchild", metav1.GetOptions{})
		return err == nil && g.DeletionTimestamp != nil, err
	})
	// Owner and child wait for the grandchild.
	time.Sleep(time.Second)
	for _, name := range []string{"owner", "child"} {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s gone before its dependents: %v", name, err)
		}
		if cm.DeletionTimestamp == nil || !contains(cm.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Errorf("%s: deletionTimestamp %v finalizers %v, want foreground deletion in progress", name, cm.DeletionTimestamp, cm.Finalizers)
		}
	}
	dropFinalizers(t, cs, ns, "grandchild")
	for _, name := range []string{"grandchild", "child", "owner"} {
		testwait.For(t, gcTimeout, name+" deleted", configMapGone(cs, ns, name))
	}
}

// TestGCBackgroundDeletion deletes an owner in the background: it goes at
// once and its dependents follow.
func TestGCBackgroundDeletion(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "gc-bg")
	owner := configMap(t, cs, ns, "owner", nil)
	for _, name := range []string{"a", "b", "c"} {
		configMap(t, cs, ns, name, []metav1.OwnerReference{ownerRef("v1", "ConfigMap", "owner", string(owner.UID), false)})
	}
	if res := srv.Kubectl(t, "-n", ns, "delete", "configmap", "owner", "--cascade=background"); res.ExitCode != 0 {
		t.Fatalf("kubectl delete: %s", res)
	}
	for _, name := range []string{"a", "b", "c"} {
		testwait.For(t, gcTimeout, name+" collected", configMapGone(cs, ns, name))
	}
}

// TestGCOrphanDeletion deletes an owner with --cascade=orphan: the
// dependents stay and lose their reference to it.
func TestGCOrphanDeletion(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "gc-orphan")
	owner := configMap(t, cs, ns, "owner", nil)
	other := configMap(t, cs, ns, "other", nil)
	configMap(t, cs, ns, "dep", []metav1.OwnerReference{
		ownerRef("v1", "ConfigMap", "owner", string(owner.UID), true),
		ownerRef("v1", "ConfigMap", "other", string(other.UID), false),
	})
	if res := srv.Kubectl(t, "-n", ns, "delete", "configmap", "owner", "--cascade=orphan"); res.ExitCode != 0 {
		t.Fatalf("kubectl delete: %s", res)
	}
	testwait.For(t, gcTimeout, "owner deleted", configMapGone(cs, ns, "owner"))
	dep, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "dep", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("orphaned dependent: %v", err)
	}
	if len(dep.OwnerReferences) != 1 || dep.OwnerReferences[0].UID != other.UID {
		t.Errorf("ownerReferences = %+v, want only the reference to %q", dep.OwnerReferences, other.Name)
	}
	// It must stay: its other owner lives.
	time.Sleep(2 * time.Second)
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "dep", metav1.GetOptions{}); err != nil {
		t.Errorf("dependent with a live owner collected: %v", err)
	}
}

// TestGCMissingOwner collects an object whose only owner never existed,
// and keeps one that has a live owner beside a missing one (dropping the
// dangling reference).
func TestGCMissingOwner(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "gc-missing")
	configMap(t, cs, ns, "dangling", []metav1.OwnerReference{ownerRef("v1", "ConfigMap", "ghost", "6f0e2b8c-0000-4000-8000-000000000001", false)})
	live := configMap(t, cs, ns, "live", nil)
	configMap(t, cs, ns, "mixed", []metav1.OwnerReference{
		ownerRef("v1", "ConfigMap", "ghost", "6f0e2b8c-0000-4000-8000-000000000002", false),
		ownerRef("v1", "ConfigMap", "live", string(live.UID), false),
	})
	testwait.For(t, gcTimeout, "object with a missing owner collected", configMapGone(cs, ns, "dangling"))
	testwait.For(t, gcTimeout, "dangling reference dropped", func(ctx context.Context) (bool, error) {
		m, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "mixed", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(m.OwnerReferences) == 1 && m.OwnerReferences[0].UID == live.UID, nil
	})
}

// TestGCInvalidOwnerNamespace gives a cluster-scoped object a namespaced
// owner: the collector records a Warning Event and goes on working.
func TestGCInvalidOwnerNamespace(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "gc-invalid")
	owner := configMap(t, cs, ns, "owner", nil)
	res := srv.KubectlStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: e2e-gc-invalid-owner
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: owner, uid: `+string(owner.UID)+`}
rules: []
`, "apply", "-f", "-")
	if res.ExitCode != 0 {
		t.Fatalf("apply: %s", res)
	}
	t.Cleanup(func() { srv.Kubectl(t, "delete", "clusterrole", "e2e-gc-invalid-owner", "--ignore-not-found") })
	testwait.For(t, gcTimeout, "OwnerRefInvalidNamespace event", func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=e2e-gc-invalid-owner"})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "OwnerRefInvalidNamespace" && e.Type == "Warning" {
				return true, nil
			}
		}
		return false, nil
	})
	// Still working on everything else.
	dep := configMap(t, cs, ns, "dep", []metav1.OwnerReference{ownerRef("v1", "ConfigMap", "missing", "6f0e2b8c-0000-4000-8000-000000000003", false)})
	testwait.For(t, gcTimeout, "collection continues", configMapGone(cs, ns, dep.Name))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
