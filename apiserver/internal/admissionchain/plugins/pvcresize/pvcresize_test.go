package pvcresize

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestPersistentVolumeClaimResize(t *testing.T) {
	client := fake.NewClientset(
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "grow"}, AllowVolumeExpansion: new(true)},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fixed"}},
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	p := &Plugin{Handler: admission.NewHandler(admission.Update)}
	p.SetExternalKubeInformerFactory(factory)
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	claim := func(class, size string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			Spec:   corev1.PersistentVolumeClaimSpec{StorageClassName: &class, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: phase},
		}
	}
	tests := []struct {
		name     string
		obj, old *corev1.PersistentVolumeClaim
		wantErr  string
	}{
		{"expandable class grows", claim("grow", "2Gi", corev1.ClaimBound), claim("grow", "1Gi", corev1.ClaimBound), ""},
		{"fixed class refused", claim("fixed", "2Gi", corev1.ClaimBound), claim("fixed", "1Gi", corev1.ClaimBound), "only dynamically provisioned pvc can be resized"},
		{"unbound claim refused", claim("grow", "2Gi", corev1.ClaimPending), claim("grow", "1Gi", corev1.ClaimPending), "Only bound persistent volume claims can be expanded"},
		{"same size passes", claim("fixed", "1Gi", corev1.ClaimBound), claim("fixed", "1Gi", corev1.ClaimBound), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.obj, tt.old, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), "ns", "c",
				corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "", admission.Update, &metav1.UpdateOptions{}, false, nil)
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
