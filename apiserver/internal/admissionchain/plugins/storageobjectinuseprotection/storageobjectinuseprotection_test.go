package storageobjectinuseprotection

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
)

func TestStorageObjectInUseProtection(t *testing.T) {
	tests := []struct {
		name     string
		obj      runtime.Object
		resource string
		want     string
	}{
		{"claim gets pvc-protection", &corev1.PersistentVolumeClaim{}, "persistentvolumeclaims", PVCFinalizer},
		{"volume gets pv-protection", &corev1.PersistentVolume{}, "persistentvolumes", PVFinalizer},
		{"finalizer not doubled", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{PVCFinalizer}}}, "persistentvolumeclaims", PVCFinalizer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.obj, nil, corev1.SchemeGroupVersion.WithKind("X"), "ns", "x",
				corev1.SchemeGroupVersion.WithResource(tt.resource), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			p := &Plugin{Handler: admission.NewHandler(admission.Create)}
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			m := tt.obj.(metav1.Object)
			if !slices.Equal(m.GetFinalizers(), []string{tt.want}) {
				t.Fatalf("finalizers %v, want [%s]", m.GetFinalizers(), tt.want)
			}
		})
	}
}
