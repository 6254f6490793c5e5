package defaultstorageclass

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func sc(name string, def bool, age time.Duration) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Now().Add(-age))}}
	if def {
		c.Annotations = map[string]string{isDefaultAnnotation: "true"}
	}
	return c
}

func TestDefaultStorageClass(t *testing.T) {
	tests := []struct {
		name    string
		classes []runtime.Object
		claim   *string
		want    string
	}{
		{"default applied", []runtime.Object{sc("fast", false, 0), sc("standard", true, time.Hour)}, nil, "standard"},
		{"newest default wins", []runtime.Object{sc("old", true, 2*time.Hour), sc("new", true, time.Hour)}, nil, "new"},
		{"no default leaves unset", []runtime.Object{sc("fast", false, 0)}, nil, ""},
		{"explicit class kept", []runtime.Object{sc("standard", true, 0)}, new("fast"), "fast"},
		{"explicit empty class kept", []runtime.Object{sc("standard", true, 0)}, new(""), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plugin{Handler: admission.NewHandler(admission.Create)}
			admissiontest.Init(t, p, tt.classes...)
			pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: tt.claim}}
			a := admission.NewAttributesRecord(pvc, nil, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), "ns", "c",
				corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			got := ""
			if pvc.Spec.StorageClassName != nil {
				got = *pvc.Spec.StorageClassName
			}
			if got != tt.want {
				t.Fatalf("class %q, want %q", got, tt.want)
			}
		})
	}
}
