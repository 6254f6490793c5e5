package prioritysort

import (
	"testing"
	"time"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func TestLess(t *testing.T) {
	now := time.Now()
	info := func(prio int32, at time.Time) *framework.QueuedPodInfo {
		return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(plugintest.WithPriority(plugintest.Pod("p", "", ""), prio)), Timestamp: at}
	}
	tests := []struct {
		name string
		a, b *framework.QueuedPodInfo
		want bool
	}{
		{name: "higher priority first", a: info(10, now), b: info(1, now.Add(-time.Minute)), want: true},
		{name: "lower priority later", a: info(1, now), b: info(10, now), want: false},
		{name: "same priority, earlier first", a: info(5, now.Add(-time.Second)), b: info(5, now), want: true},
		{name: "same priority, later after", a: info(5, now), b: info(5, now.Add(-time.Second)), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Plugin{}).Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less = %v, want %v", got, tt.want)
			}
		})
	}
}
