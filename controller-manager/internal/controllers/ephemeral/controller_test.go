package ephemeral

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

func TestSync(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "pod-uid"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kind": "scratch"}},
				Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
			}}}},
			{Name: "plain", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}},
	}
	foreign := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "p-scratch", Namespace: "ns"}}
	tests := []struct {
		name       string
		objs       []runtime.Object
		wantOwned  bool
		wantEvents int
	}{
		{"claim created, owned by the pod", []runtime.Object{pod}, true, 0},
		{"someone else's claim is not taken over", []runtime.Object{pod, foreign}, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := fake.NewClientset(tt.objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			recorder := record.NewFakeRecorder(10)
			c, err := New(Options{Client: client, Pods: factory.Core().V1().Pods(), Claims: factory.Core().V1().PersistentVolumeClaims(), Recorder: recorder})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			if err := c.sync(ctx, "ns/p"); err != nil {
				t.Fatal(err)
			}
			claim, err := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "p-scratch", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ref := metav1.GetControllerOf(claim)
			if owned := ref != nil && ref.UID == pod.UID; owned != tt.wantOwned {
				t.Errorf("owned by pod = %v, want %v", owned, tt.wantOwned)
			}
			if tt.wantOwned && claim.Labels["kind"] != "scratch" {
				t.Errorf("template labels not copied: %v", claim.Labels)
			}
			if len(recorder.Events) != tt.wantEvents {
				t.Errorf("events = %d, want %d", len(recorder.Events), tt.wantEvents)
			}
			claims, _ := client.CoreV1().PersistentVolumeClaims("ns").List(ctx, metav1.ListOptions{})
			if len(claims.Items) != 1 {
				t.Errorf("claims = %d, want 1", len(claims.Items))
			}
		})
	}
}
