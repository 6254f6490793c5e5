package pods

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pod(name, node string, phase corev1.PodPhase, ready bool, age time.Duration, now time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))}}
	p.Spec.NodeName = node
	p.Status.Phase = phase
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(now.Add(-age))}}
	return p
}

func TestRankForDeletion(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		pods []*corev1.Pod
		want []string
	}{
		{"unscheduled first", []*corev1.Pod{
			pod("a", "n1", corev1.PodRunning, true, time.Hour, now),
			pod("b", "", corev1.PodPending, false, time.Hour, now),
		}, []string{"b", "a"}},
		{"pending before running", []*corev1.Pod{
			pod("a", "n1", corev1.PodRunning, false, time.Hour, now),
			pod("b", "n1", corev1.PodPending, false, time.Hour, now),
		}, []string{"b", "a"}},
		{"not ready before ready", []*corev1.Pod{
			pod("a", "n1", corev1.PodRunning, true, time.Hour, now),
			pod("b", "n2", corev1.PodRunning, false, time.Hour, now),
		}, []string{"b", "a"}},
		{"doubled up node first", []*corev1.Pod{
			pod("a", "n1", corev1.PodRunning, true, time.Hour, now),
			pod("b", "n2", corev1.PodRunning, true, time.Hour, now),
			pod("c", "n2", corev1.PodRunning, true, time.Hour, now),
		}, []string{"b", "c", "a"}},
		{"newer first", []*corev1.Pod{
			pod("a", "n1", corev1.PodRunning, true, 10*time.Hour, now),
			pod("b", "n2", corev1.PodRunning, true, time.Minute, now),
		}, []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			RankForDeletion(tt.pods, tt.pods, now)
			for i, p := range tt.pods {
				if p.Name != tt.want[i] {
					t.Fatalf("order %v, want %v", names(tt.pods), tt.want)
				}
			}
		})
	}
}

func names(ps []*corev1.Pod) []string {
	var n []string
	for _, p := range ps {
		n = append(n, p.Name)
	}
	return n
}

func TestSlowStartBatch(t *testing.T) {
	tests := []struct {
		name      string
		count     int
		failAt    int32
		wantOK    int
		wantCalls int32
	}{
		{"all succeed", 10, -1, 10, 10},
		{"first fails", 10, 0, 0, 1},
		{"fails in third batch", 10, 4, 6, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			ok, err := SlowStartBatch(tt.count, 1, func(int) error {
				if calls.Add(1)-1 == tt.failAt {
					return errors.New("boom")
				}
				return nil
			})
			if ok != tt.wantOK || calls.Load() != tt.wantCalls || (err != nil) != (tt.failAt >= 0) {
				t.Errorf("ok=%d calls=%d err=%v, want ok=%d calls=%d", ok, calls.Load(), err, tt.wantOK, tt.wantCalls)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	now := time.Now()
	p := pod("a", "n", corev1.PodRunning, true, 5*time.Second, now)
	if !Available(p, 0, now) || !Available(p, 5, now) || Available(p, 10, now) {
		t.Error("availability by minReadySeconds wrong")
	}
}
