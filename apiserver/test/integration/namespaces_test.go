package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/componentbase/testwait"
)

func TestNamespaces(t *testing.T) {
	ctx := testContext(t)
	api := client.CoreV1().Namespaces()

	t.Run("system namespaces exist", func(t *testing.T) {
		for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			ns, err := api.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("namespace %s: %v", name, err)
				continue
			}
			if ns.Status.Phase != corev1.NamespaceActive || ns.Labels[corev1.LabelMetadataName] != name {
				t.Errorf("namespace %s: phase %q labels %v, want Active and %s=%s", name, ns.Status.Phase, ns.Labels, corev1.LabelMetadataName, name)
			}
		}
	})

	t.Run("new namespace is active with the kubernetes finalizer", func(t *testing.T) {
		ns, err := api.Get(ctx, newNamespace(t), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns.Status.Phase != corev1.NamespaceActive || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
			t.Errorf("new namespace: phase %q finalizers %v, want Active and [kubernetes]", ns.Status.Phase, ns.Spec.Finalizers)
		}
	})

	t.Run("objects cannot be created in a missing namespace", func(t *testing.T) {
		_, err := client.CoreV1().ConfigMaps("no-such-namespace").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
		wantStatus(t, err, 404)
	})

	t.Run("delete makes the namespace terminating and forbids creates in it", func(t *testing.T) {
		name := newNamespace(t)
		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ns, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace gone right after delete; it must wait for its finalizer: %v", err)
		}
		if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
			t.Errorf("after delete: phase %q deletionTimestamp %v, want Terminating and set", ns.Status.Phase, ns.DeletionTimestamp)
		}
		// Admission reads namespaces from an informer: allow it to catch up.
		testwait.For(t, 20*time.Second, "create in a terminating namespace is forbidden", func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("late")}}, metav1.CreateOptions{})
			return err != nil && statusCode(err) == 403, err
		})
		// A second delete is accepted and changes nothing.
		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("second delete of a terminating namespace: %v", err)
		}
	})

	t.Run("delete preconditions", func(t *testing.T) {
		name := newNamespace(t)
		wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
		wantStatus(t, api.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}}), 409)
		stale := "1"
		wantStatus(t, api.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}), 409)
		ns, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil || ns.DeletionTimestamp != nil {
			t.Errorf("namespace after refused deletes: %v (deletionTimestamp %v)", err, ns.DeletionTimestamp)
		}
	})

	t.Run("terminating namespace survives updates while spec.finalizers remain", func(t *testing.T) {
		name := newNamespace(t)
		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := api.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("label a terminating namespace: %v", err)
		}
		ns, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("terminating namespace removed by a label update before it was finalized: %v", err)
		}
		if ns.Status.Phase != corev1.NamespaceTerminating {
			t.Errorf("phase after update = %q, want Terminating", ns.Status.Phase)
		}
	})

	t.Run("finalize subresource", func(t *testing.T) {
		name := newNamespace(t)
		ns, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Finalize on a live namespace edits spec.finalizers and nothing else.
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, "example.com/cleanup")
		ns.Labels["ignored"] = "yes"
		out, err := api.Finalize(ctx, ns, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("finalize: %v", err)
		}
		if !slices.Contains(out.Spec.Finalizers, "example.com/cleanup") || out.Labels["ignored"] != "" {
			t.Errorf("after finalize: finalizers %v labels %v, want the finalizer added and labels unchanged", out.Spec.Finalizers, out.Labels)
		}
		// The main resource cannot change spec.finalizers.
		out.Spec.Finalizers = nil
		updated, err := api.Update(ctx, out, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(updated.Spec.Finalizers) != 2 {
			t.Errorf("main update changed spec.finalizers to %v", updated.Spec.Finalizers)
		}

		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		term, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		term.Spec.Finalizers = nil
		if _, err := api.Finalize(ctx, term, metav1.UpdateOptions{}); err != nil && statusCode(err) != 404 {
			t.Fatalf("finalize terminating namespace: %v", err)
		}
		_, err = api.Get(ctx, name, metav1.GetOptions{})
		wantStatus(t, err, 404)
	})

	t.Run("immortal namespaces cannot be deleted", func(t *testing.T) {
		for _, name := range []string{"default", "kube-system", "kube-public"} {
			err := api.Delete(ctx, name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil {
				t.Errorf("delete of %s accepted, want 403", name)
				continue
			}
			if statusCode(err) != 403 {
				t.Errorf("delete of %s: %v, want 403", name, err)
			}
		}
	})
}
