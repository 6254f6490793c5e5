package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// TestProtobufClient drives the typed clientset in protobuf both ways, as
// the controller manager, scheduler and kubelet talk.
func TestProtobufClient(t *testing.T) {
	pb, err := kubernetes.NewForConfig(protobufConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	ctx := testContext(t)

	t.Run("deployment create get list watch update scale patch delete", func(t *testing.T) {
		api := pb.AppsV1().Deployments(ns)
		d := sampleDeployment(ns).(*appsv1.Deployment)
		d.Name = uniqueName("pb")
		created, err := api.Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		rec := record(w)
		if got, err := api.Get(ctx, d.Name, metav1.GetOptions{}); err != nil || got.UID != created.UID {
			t.Fatalf("get: %v (uid %v)", err, got)
		}
		list, err := api.List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list: %v (%d items)", err, len(list.Items))
		}
		created.Labels = map[string]string{"pb": "yes"}
		if _, err := api.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		sc, err := api.GetScale(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		sc.Spec.Replicas = 2
		if _, err := api.UpdateScale(ctx, d.Name, sc, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update scale: %v", err)
		}
		// Patch bodies are JSON whatever the client's content type.
		if _, err := api.Patch(ctx, d.Name, types.StrategicMergePatchType, []byte(`{"metadata":{"annotations":{"pb":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patch: %v", err)
		}
		if err := api.Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		evs := rec.waitFor(t, func(evs []watch.Event) bool { return len(evs) > 0 && evs[len(evs)-1].Type == watch.Deleted })
		if len(evs) < 4 {
			t.Errorf("watch saw %v, want MODIFIED (update, scale, patch) then DELETED", eventTypes(evs))
		}
	})

	t.Run("pods and binding", func(t *testing.T) {
		p := samplePod(ns).(*corev1.Pod)
		p.Name = uniqueName("pb")
		if _, err := pb.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pb.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-pb"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("bind in protobuf: %v", err)
		}
		got, err := pb.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil || got.Spec.NodeName != "node-pb" {
			t.Fatalf("get bound pod: %v (%v)", err, got)
		}
	})

	t.Run("events in both groups", func(t *testing.T) {
		ev := sampleCoreEvent(ns).(*corev1.Event)
		ev.Name = uniqueName("pb")
		if _, err := pb.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := pb.EventsV1().Events(ns).Get(ctx, ev.Name, metav1.GetOptions{})
		if err != nil || got.Note != ev.Message {
			t.Fatalf("get through events.k8s.io in protobuf: %v (%v)", err, got)
		}
		nev := sampleEventsV1Event(ns).(*eventsv1.Event)
		nev.Name = uniqueName("pb")
		if _, err := pb.EventsV1().Events(ns).Create(ctx, nev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := pb.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 2 {
			t.Fatalf("list core events in protobuf: %v (%d items)", err, len(list.Items))
		}
	})

	t.Run("error status in protobuf", func(t *testing.T) {
		_, err := pb.CoreV1().ConfigMaps(ns).Get(ctx, "no-such-configmap", metav1.GetOptions{})
		se := wantStatus(t, err, 404)
		if se.ErrStatus.Reason != metav1.StatusReasonNotFound || se.ErrStatus.Details == nil || se.ErrStatus.Details.Name != "no-such-configmap" {
			t.Errorf("status = %+v, want NotFound naming the configmap", se.ErrStatus)
		}
	})
}
