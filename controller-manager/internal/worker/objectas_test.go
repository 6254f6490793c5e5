package worker

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestObjectAs(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}
	tests := []struct {
		name string
		obj  any
		want bool
	}{
		{"plain object", cm, true},
		{"tombstone", cache.DeletedFinalStateUnknown{Key: "ns/c", Obj: cm}, true},
		{"other type", &corev1.Secret{}, false},
		{"tombstone of another type", cache.DeletedFinalStateUnknown{Key: "ns/s", Obj: &corev1.Secret{}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ObjectAs[*corev1.ConfigMap](tt.obj)
			if ok != tt.want || (ok && got != cm) {
				t.Errorf("ObjectAs = %v, %v; want ok %v", got, ok, tt.want)
			}
		})
	}
}
