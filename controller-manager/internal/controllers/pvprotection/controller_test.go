package pvprotection

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestSync(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name      string
		pv        *corev1.PersistentVolume
		wantFinal bool
	}{
		{"new volume gets the finalizer", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "v"}}, true},
		{"deleted bound volume keeps it", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "v", DeletionTimestamp: &now, Finalizers: []string{Finalizer}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}, true},
		{"deleted released volume loses it", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "v", DeletionTimestamp: &now, Finalizers: []string{Finalizer, "other"}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := fake.NewClientset(tt.pv)
			factory := informers.NewSharedInformerFactory(client, 0)
			c, err := New(Options{Client: client, Volumes: factory.Core().V1().PersistentVolumes()})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			if err := c.sync(ctx, "v"); err != nil {
				t.Fatal(err)
			}
			got, _ := client.CoreV1().PersistentVolumes().Get(ctx, "v", metav1.GetOptions{})
			if has := slices.Contains(got.Finalizers, Finalizer); has != tt.wantFinal {
				t.Errorf("finalizers %v, want %s: %v", got.Finalizers, Finalizer, tt.wantFinal)
			}
		})
	}
}
