package nodestatus

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestAllocatable(t *testing.T) {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
	}
	tests := []struct {
		name                   string
		kube, system, eviction map[string]string
		want                   map[corev1.ResourceName]string
	}{
		{"nothing reserved", nil, nil, nil, map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "8Gi"}},
		{"reservations and hard eviction", map[string]string{"cpu": "500m", "memory": "1Gi"}, map[string]string{"cpu": "500m"}, map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"},
			map[corev1.ResourceName]string{corev1.ResourceCPU: "3", corev1.ResourceMemory: "7068Mi", corev1.ResourceEphemeralStorage: "90Gi", corev1.ResourcePods: "110"}},
		{"never negative", map[string]string{"cpu": "8"}, nil, nil, map[corev1.ResourceName]string{corev1.ResourceCPU: "0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Allocatable(capacity, tc.kube, tc.system, tc.eviction)
			for r, w := range tc.want {
				q := got[r]
				if q.Cmp(resource.MustParse(w)) != 0 {
					t.Errorf("%s = %s, want %s", r, q.String(), w)
				}
			}
		})
	}
}
