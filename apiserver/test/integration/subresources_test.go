package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func newDeployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	d := sampleDeployment(ns).(*appsv1.Deployment)
	d.Name = uniqueName("deploy")
	d.Status = appsv1.DeploymentStatus{Replicas: 5, ReadyReplicas: 5}
	created, err := client.AppsV1().Deployments(ns).Create(testContext(t), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	return created
}

func TestStatusSubresource(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	api := client.AppsV1().Deployments(ns)

	t.Run("create clears status", func(t *testing.T) {
		d := newDeployment(t, ns)
		if d.Status.Replicas != 0 || d.Status.ReadyReplicas != 0 {
			t.Errorf("status after create = %+v, want it cleared", d.Status)
		}
		if d.Generation != 1 {
			t.Errorf("generation after create = %d, want 1", d.Generation)
		}
	})

	t.Run("main update ignores status", func(t *testing.T) {
		d := newDeployment(t, ns)
		d.Status.Replicas = 7
		d.Labels = map[string]string{"touched": "yes"}
		out, err := api.Update(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status.Replicas != 0 {
			t.Errorf("main update wrote status.replicas = %d", out.Status.Replicas)
		}
		if out.Generation != 1 {
			t.Errorf("label-only update moved generation to %d, want 1", out.Generation)
		}
	})

	t.Run("status update ignores spec", func(t *testing.T) {
		d := newDeployment(t, ns)
		d.Status.Replicas = 2
		d.Status.ObservedGeneration = d.Generation
		d.Spec.Replicas = ptr.To[int32](9)
		out, err := api.UpdateStatus(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status.Replicas != 2 {
			t.Errorf("status update: status.replicas = %d, want 2", out.Status.Replicas)
		}
		if *out.Spec.Replicas != 1 || out.Generation != 1 {
			t.Errorf("status update changed spec.replicas to %d (generation %d), want 1 (1)", *out.Spec.Replicas, out.Generation)
		}
	})

	t.Run("status merge patch", func(t *testing.T) {
		d := newDeployment(t, ns)
		out, err := api.Patch(ctx, d.Name, types.MergePatchType, []byte(`{"status":{"availableReplicas":1,"readyReplicas":1,"replicas":1}}`), metav1.PatchOptions{}, "status")
		if err != nil {
			t.Fatal(err)
		}
		if out.Status.AvailableReplicas != 1 {
			t.Errorf("status patch: availableReplicas = %d, want 1", out.Status.AvailableReplicas)
		}
	})

	t.Run("generation bumps on spec change", func(t *testing.T) {
		d := newDeployment(t, ns)
		d.Spec.Template.Spec.Containers[0].Image = "busybox:1.36"
		out, err := api.Update(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Generation != 2 {
			t.Errorf("generation after a spec change = %d, want 2", out.Generation)
		}
		out.Status.ObservedGeneration = 2
		out, err = api.UpdateStatus(ctx, out, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Generation != 2 {
			t.Errorf("generation after a status update = %d, want 2", out.Generation)
		}
	})

	t.Run("apply to status", func(t *testing.T) {
		d := newDeployment(t, ns)
		body := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + d.Name + `"},"status":{"replicas":3}}`)
		out, err := api.Patch(ctx, d.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "status-writer"}, "status")
		if err != nil {
			t.Fatal(err)
		}
		if out.Status.Replicas != 3 {
			t.Errorf("applied status.replicas = %d, want 3", out.Status.Replicas)
		}
	})
}

func TestScaleSubresource(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)

	t.Run("deployment get and update scale", func(t *testing.T) {
		d := newDeployment(t, ns)
		api := client.AppsV1().Deployments(ns)
		sc, err := api.GetScale(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Spec.Replicas != 1 || sc.Status.Selector != "app=web" || sc.UID != d.UID {
			t.Errorf("scale = %+v, want spec.replicas 1, selector app=web, the deployment's uid", sc)
		}
		sc.Spec.Replicas = 3
		out, err := api.UpdateScale(ctx, d.Name, sc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.Replicas != 3 {
			t.Errorf("updated scale spec.replicas = %d, want 3", out.Spec.Replicas)
		}
		got, err := api.Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *got.Spec.Replicas != 3 || got.Generation != 2 {
			t.Errorf("deployment after scale: replicas %d generation %d, want 3 and 2", *got.Spec.Replicas, got.Generation)
		}

		// The scale's resourceVersion is a precondition on the deployment.
		sc.Spec.Replicas = 4
		_, err = api.UpdateScale(ctx, d.Name, sc, metav1.UpdateOptions{})
		wantStatus(t, err, 409)

		_, err = api.UpdateScale(ctx, d.Name, &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: ns},
			Spec:       autoscalingv1.ScaleSpec{Replicas: -1},
		}, metav1.UpdateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.replicas")
	})

	t.Run("deployment scale merge patch", func(t *testing.T) {
		d := newDeployment(t, ns)
		sc, err := dyn.Resource(gvr("apps", "v1", "deployments")).Namespace(ns).Patch(ctx, d.Name, types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale")
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas"); r != 5 || sc.GetKind() != "Scale" {
			t.Errorf("scale patch answered %s with replicas %d, want a Scale with 5", sc.GetKind(), r)
		}
	})

	// Every scalable kind answers autoscaling/v1 Scale.
	for _, rc := range resourceCases {
		switch rc.id() {
		case "deployments.apps", "replicasets.apps", "statefulsets.apps", "replicationcontrollers":
		default:
			continue
		}
		t.Run(rc.id()+" scale", func(t *testing.T) {
			api := dyn.Resource(rc.gvr).Namespace(ns)
			name := rc.newName()
			if _, err := api.Create(ctx, rc.object(t, true, ns, name, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			sc, err := api.Get(ctx, name, metav1.GetOptions{}, "scale")
			if err != nil {
				t.Fatal(err)
			}
			if sc.GetAPIVersion() != "autoscaling/v1" || sc.GetKind() != "Scale" {
				t.Errorf("scale is %s %s, want autoscaling/v1 Scale", sc.GetAPIVersion(), sc.GetKind())
			}
			if err := unstructured.SetNestedField(sc.Object, int64(2), "spec", "replicas"); err != nil {
				t.Fatal(err)
			}
			if _, err := api.Update(ctx, sc, metav1.UpdateOptions{}, "scale"); err != nil {
				t.Fatalf("update scale: %v", err)
			}
			got, err := api.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 2 {
				t.Errorf("spec.replicas after scale = %d, want 2", r)
			}
		})
	}
}
