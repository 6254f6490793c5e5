package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(cpu, mem string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

func res(req, lim corev1.ResourceList) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: req, Limits: lim}
}

func TestPodQOSClass(t *testing.T) {
	tests := []struct {
		name     string
		podLevel *corev1.ResourceRequirements
		init     []corev1.ResourceRequirements
		app      []corev1.ResourceRequirements
		want     corev1.PodQOSClass
	}{
		{name: "nothing requested", app: []corev1.ResourceRequirements{{}}, want: corev1.PodQOSBestEffort},
		{name: "zero requests and limits count as none", app: []corev1.ResourceRequirements{res(rl("0", "0"), rl("0", "0"))}, want: corev1.PodQOSBestEffort},
		{name: "only other resources", app: []corev1.ResourceRequirements{res(corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}, nil)}, want: corev1.PodQOSBestEffort},
		{name: "limits equal requests", app: []corev1.ResourceRequirements{res(rl("1", "1Gi"), rl("1", "1Gi"))}, want: corev1.PodQOSGuaranteed},
		{name: "limits alone, as defaulting makes them requests", app: []corev1.ResourceRequirements{res(nil, rl("500m", "128Mi"))}, want: corev1.PodQOSGuaranteed},
		{name: "requests below limits", app: []corev1.ResourceRequirements{res(rl("100m", "1Gi"), rl("1", "1Gi"))}, want: corev1.PodQOSBurstable},
		{name: "requests alone", app: []corev1.ResourceRequirements{res(rl("1", ""), nil)}, want: corev1.PodQOSBurstable},
		{name: "memory limit only", app: []corev1.ResourceRequirements{res(nil, rl("", "1Gi"))}, want: corev1.PodQOSBurstable},
		{name: "zero cpu limit is no limit", app: []corev1.ResourceRequirements{res(rl("0", "1Gi"), rl("0", "1Gi"))}, want: corev1.PodQOSBurstable},
		{name: "one best-effort container", app: []corev1.ResourceRequirements{res(rl("1", "1Gi"), rl("1", "1Gi")), {}}, want: corev1.PodQOSBurstable},
		{name: "init containers count", init: []corev1.ResourceRequirements{res(rl("1", ""), nil)}, app: []corev1.ResourceRequirements{{}}, want: corev1.PodQOSBurstable},
		{name: "guaranteed init and app", init: []corev1.ResourceRequirements{res(rl("1", "1Gi"), rl("1", "1Gi"))}, app: []corev1.ResourceRequirements{res(rl("2", "2Gi"), rl("2", "2Gi"))}, want: corev1.PodQOSGuaranteed},
		{name: "pod-level resources stand for the containers'", podLevel: &corev1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")}, app: []corev1.ResourceRequirements{{}}, want: corev1.PodQOSGuaranteed},
		{name: "pod-level requests alone", podLevel: &corev1.ResourceRequirements{Requests: rl("1", "1Gi")}, app: []corev1.ResourceRequirements{res(rl("1", "1Gi"), rl("1", "1Gi"))}, want: corev1.PodQOSBurstable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Resources: tt.podLevel}}
			for _, r := range tt.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: "init", Resources: r})
			}
			for _, r := range tt.app {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "app", Resources: r})
			}
			if got := PodQOSClass(pod); got != tt.want {
				t.Errorf("PodQOSClass = %s, want %s", got, tt.want)
			}
		})
	}
}
