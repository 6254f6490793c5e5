package pods

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func container(req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func rl(cpu, mem string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if cpu != "" {
		out[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		out[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return out
}

func TestQOSClass(t *testing.T) {
	tests := []struct {
		name       string
		containers []corev1.Container
		want       corev1.PodQOSClass
	}{
		{"nothing requested is best effort", []corev1.Container{container(nil, nil)}, corev1.PodQOSBestEffort},
		{"limits equal requests is guaranteed", []corev1.Container{container(rl("1", "1Gi"), rl("1", "1Gi"))}, corev1.PodQOSGuaranteed},
		{"limits alone are guaranteed", []corev1.Container{container(nil, rl("500m", "128Mi"))}, corev1.PodQOSGuaranteed},
		{"requests below limits are burstable", []corev1.Container{container(rl("100m", "1Gi"), rl("1", "1Gi"))}, corev1.PodQOSBurstable},
		{"memory limit only is burstable", []corev1.Container{container(nil, rl("", "1Gi"))}, corev1.PodQOSBurstable},
		{"one best-effort container makes the pod burstable", []corev1.Container{container(rl("1", "1Gi"), rl("1", "1Gi")), container(nil, nil)}, corev1.PodQOSBurstable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: tt.containers}}
			if got := QOSClass(pod); got != tt.want {
				t.Errorf("QOSClass = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCheckGracefulDelete(t *testing.T) {
	tests := []struct {
		name      string
		nodeName  string
		phase     corev1.PodPhase
		podGrace  *int64
		reqGrace  *int64
		wantGrace int64
	}{
		{"scheduled pod uses its termination grace period", "n1", corev1.PodRunning, ptr.To[int64](45), nil, 45},
		{"scheduled pod without one uses 30s", "n1", corev1.PodRunning, nil, nil, 30},
		{"request overrides the pod", "n1", corev1.PodRunning, ptr.To[int64](45), ptr.To[int64](5), 5},
		{"unscheduled pod goes at once", "", corev1.PodPending, ptr.To[int64](45), nil, 0},
		{"finished pod goes at once", "n1", corev1.PodSucceeded, ptr.To[int64](45), nil, 0},
		{"failed pod goes at once", "n1", corev1.PodFailed, nil, ptr.To[int64](10), 0},
		{"negative request means the minimum", "n1", corev1.PodRunning, nil, ptr.To[int64](-1), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: tt.nodeName, TerminationGracePeriodSeconds: tt.podGrace}, Status: corev1.PodStatus{Phase: tt.phase}}
			opts := &metav1.DeleteOptions{GracePeriodSeconds: tt.reqGrace}
			if !checkGracefulDelete(context.Background(), pod, opts) {
				t.Fatal("pods always delete gracefully")
			}
			if *opts.GracePeriodSeconds != tt.wantGrace {
				t.Errorf("grace = %d, want %d", *opts.GracePeriodSeconds, tt.wantGrace)
			}
		})
	}
}
