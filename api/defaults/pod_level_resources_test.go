package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Expected values follow KEP-2837 (pod-level resources) as implemented for
// 1.37 by kubernetes/kubernetes#140514, which moved this defaulting from
// pkg/apis/core/v1/defaults.go into the pod strategy's PrepareForCreate:
// hugepage limits, then requests, then limits, each only where missing.
func TestPodLevelResources(t *testing.T) {
	q := resource.MustParse
	always := corev1.ContainerRestartPolicyAlways
	containers := func(cs ...corev1.ResourceRequirements) []corev1.Container {
		out := make([]corev1.Container, len(cs))
		for i, r := range cs {
			out[i] = corev1.Container{Name: string(rune('a' + i)), Resources: r}
		}
		return out
	}
	cases := []struct {
		name string
		in   corev1.PodSpec
		want *corev1.ResourceRequirements
	}{
		{
			name: "no pod-level resources: nothing to do",
			in:   corev1.PodSpec{Containers: containers(corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}})},
			want: nil,
		},
		{
			name: "pod limit only: requests from containers, else from the limit",
			in: corev1.PodSpec{
				Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("4"), corev1.ResourceMemory: q("4Gi")}},
				Containers: containers(
					corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}},
					corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m")}},
				),
			},
			want: &corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: q("4"), corev1.ResourceMemory: q("4Gi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("1500m"), corev1.ResourceMemory: q("4Gi")},
			},
		},
		{
			name: "pod request only: limit when every container has one, at least the request",
			in: corev1.PodSpec{
				Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("3"), corev1.ResourceMemory: q("1Gi")}},
				Containers: containers(
					corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}},
					corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("1")}},
				),
			},
			want: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("3"), corev1.ResourceMemory: q("1Gi")},
				// cpu: max(request 3, containers 2); memory: one container is unbounded.
				Limits: corev1.ResourceList{corev1.ResourceCPU: q("3")},
			},
		},
		{
			name: "sidecars add up and init containers count at their peak",
			in: corev1.PodSpec{
				Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("8Gi")}},
				InitContainers: []corev1.Container{
					{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}}},
					{Name: "setup", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("4Gi")}}},
				},
				Containers: containers(corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("2Gi")}}),
			},
			want: &corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: q("8Gi")},
				// max(app 2Gi + sidecar 1Gi, setup 4Gi + sidecar 1Gi).
				Requests: corev1.ResourceList{corev1.ResourceMemory: q("5Gi")},
			},
		},
		{
			name: "hugepage limits from containers",
			in: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}},
				Containers: containers(corev1.ResourceRequirements{Limits: corev1.ResourceList{"hugepages-2Mi": q("20Mi")}}),
			},
			want: &corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"hugepages-2Mi": q("20Mi")},
				Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi"), "hugepages-2Mi": q("20Mi")},
			},
		},
		{
			name: "extended resources are not pod-level",
			in: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}},
				Containers: containers(corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/gpu": q("1")}, Requests: corev1.ResourceList{"example.com/gpu": q("1")}}),
			},
			want: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: tc.in}
			PodLevelResources(p)
			assertSameJSON(t, p.Spec.Resources, tc.want)
		})
	}
}
