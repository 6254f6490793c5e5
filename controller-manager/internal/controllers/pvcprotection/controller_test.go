package pvcprotection

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestSync(t *testing.T) {
	now := metav1.Now()
	deleted := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", DeletionTimestamp: &now, Finalizers: []string{Finalizer}}}
	user := func(phase corev1.PodPhase, vol corev1.VolumeSource) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: "ns"},
			Spec:   corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: vol}}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	byName := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}
	tests := []struct {
		name      string
		objs      []runtime.Object
		wantFinal bool
	}{
		{"new claim gets the finalizer", []runtime.Object{&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns"}}}, true},
		{"deleted unused claim loses it", []runtime.Object{deleted.DeepCopy()}, false},
		{"deleted claim a running pod uses keeps it", []runtime.Object{deleted.DeepCopy(), user(corev1.PodRunning, byName)}, true},
		{"deleted claim a finished pod used loses it", []runtime.Object{deleted.DeepCopy(), user(corev1.PodSucceeded, byName)}, false},
		{"ephemeral volume's claim counts", []runtime.Object{
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "user-v", Namespace: "ns", DeletionTimestamp: &now, Finalizers: []string{Finalizer}}},
			user(corev1.PodRunning, corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}),
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := fake.NewClientset(tt.objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			c, err := New(Options{Client: client, Claims: factory.Core().V1().PersistentVolumeClaims(), Pods: factory.Core().V1().Pods()})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			claims, _ := client.CoreV1().PersistentVolumeClaims("ns").List(ctx, metav1.ListOptions{})
			name := claims.Items[0].Name
			if err := c.sync(ctx, "ns/"+name); err != nil {
				t.Fatal(err)
			}
			got, _ := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, name, metav1.GetOptions{})
			if has := slices.Contains(got.Finalizers, Finalizer); has != tt.wantFinal {
				t.Errorf("finalizers %v, want %s: %v", got.Finalizers, Finalizer, tt.wantFinal)
			}
		})
	}
}
