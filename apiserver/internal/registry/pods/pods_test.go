package pods

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

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
