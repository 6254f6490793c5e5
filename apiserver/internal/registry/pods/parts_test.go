package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResizedContainers(t *testing.T) {
	cpu := func(v string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}}
	}
	old := []corev1.Container{{Name: "a", Image: "old", Resources: cpu("10m")}, {Name: "b", Image: "old", Resources: cpu("20m")}}
	policy := []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
	tests := []struct {
		name   string
		cur    []corev1.Container
		want   []corev1.Container
		wantOK bool
	}{
		{"resources and policy taken, the rest kept",
			[]corev1.Container{{Name: "a", Image: "new", Resources: cpu("15m"), ResizePolicy: policy}, {Name: "b", Image: "new", Resources: cpu("20m")}},
			[]corev1.Container{{Name: "a", Image: "old", Resources: cpu("15m"), ResizePolicy: policy}, {Name: "b", Image: "old", Resources: cpu("20m")}}, true},
		{"reordered", []corev1.Container{old[1], old[0]}, nil, false},
		{"removed", old[:1], nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := resizedContainers(tt.cur, old)
			if ok != tt.wantOK || !apiequality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("got %v %v, want %v %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
