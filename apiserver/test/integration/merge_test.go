package integration

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestMergeSemantics checks that strategic merge patch and server-side
// apply know the built-in types' list keys (from the served OpenAPI), as
// `kubectl apply` and `kubectl patch` rely on.
func TestMergeSemantics(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	api := client.AppsV1().Deployments(ns)
	twoContainers := func() *appsv1.Deployment {
		d := sampleDeployment(ns).(*appsv1.Deployment)
		d.Name = uniqueName("merge")
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
		return d
	}
	images := func(d *appsv1.Deployment) map[string]string {
		out := map[string]string{}
		for _, c := range d.Spec.Template.Spec.Containers {
			out[c.Name] = c.Image
		}
		return out
	}

	t.Run("strategic merge patch merges containers by name", func(t *testing.T) {
		d, err := api.Create(ctx, twoContainers(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := api.Patch(ctx, d.Name, types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := images(out); len(got) != 2 || got["web"] != "busybox" || got["sidecar"] != "busybox:1.36" {
			t.Errorf("containers after patch = %v, want web kept and sidecar updated", got)
		}
	})

	t.Run("strategic merge patch deletes by directive", func(t *testing.T) {
		d, err := api.Create(ctx, twoContainers(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := api.Patch(ctx, d.Name, types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := images(out); len(got) != 1 || got["web"] == "" {
			t.Errorf("containers after delete directive = %v, want only web", got)
		}
	})

	t.Run("merge patch replaces lists", func(t *testing.T) {
		d, err := api.Create(ctx, twoContainers(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := api.Patch(ctx, d.Name, types.MergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"busybox"}]}}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := images(out); len(got) != 1 || got["only"] == "" {
			t.Errorf("containers after merge patch = %v, want only the patched list", got)
		}
	})

	t.Run("apply shares a list between managers by key", func(t *testing.T) {
		name := uniqueName("merge")
		apply := func(manager, container string) (*appsv1.Deployment, error) {
			body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `"},"spec":{
				"selector":{"matchLabels":{"app":"web"}},
				"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"` + container + `","image":"busybox"}]}}}}`
			return api.Patch(ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager})
		}
		if _, err := apply("team-a", "a"); err != nil {
			t.Fatal(err)
		}
		out, err := apply("team-b", "b")
		if err != nil {
			t.Fatal(err)
		}
		if got := images(out); len(got) != 2 || got["a"] == "" || got["b"] == "" {
			t.Errorf("containers after two managers applied = %v, want a and b", got)
		}
		// team-a dropping its container removes only that one.
		body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `"}}`
		out, err = api.Patch(ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "team-a"})
		if err != nil {
			t.Fatal(err)
		}
		if got := images(out); len(got) != 1 || got["b"] == "" {
			t.Errorf("containers after team-a gave up its own = %v, want only b", got)
		}
	})
}

// TestJobDefaultDeletion checks upstream's batch/v1 quirk: a Job deleted
// without a propagation policy orphans its pods, so the orphan finalizer
// holds it until the garbage collector has done so.
func TestJobDefaultDeletion(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	api := client.BatchV1().Jobs(ns)
	job := sampleJob(ns).(*batchv1.Job)
	job.Name = uniqueName("job")
	created, err := api.Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("generated selector", func(t *testing.T) {
		uid := string(created.UID)
		if created.Spec.Selector == nil || created.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != uid ||
			created.Spec.Template.Labels[batchv1.ControllerUidLabel] != uid || created.Spec.Template.Labels[batchv1.JobNameLabel] != job.Name {
			t.Errorf("job selector %v template labels %v, want both keyed on the job's uid", created.Spec.Selector, created.Spec.Template.Labels)
		}
	})
	t.Run("delete without policy orphans", func(t *testing.T) {
		if err := api.Delete(ctx, job.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := api.Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("job gone at once; want it held by the orphan finalizer: %v", err)
		}
		if got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, metav1.FinalizerOrphanDependents) {
			t.Errorf("job after delete: deletionTimestamp %v finalizers %v, want set and [orphan]", got.DeletionTimestamp, got.Finalizers)
		}
	})
}
