package schedulinggates

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"trireme.dev/scheduler/internal/plugintest"
)

func TestPreEnqueue(t *testing.T) {
	tests := []struct {
		name  string
		gates []string
		want  string
	}{
		{name: "no gates"},
		{name: "two gates", gates: []string{"a", "b"}, want: "waiting for scheduling gates: [a b]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.Pod("p", "", "")
			for _, g := range tt.gates {
				p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
			}
			st := Plugin{}.PreEnqueue(context.Background(), p)
			if tt.want == "" {
				if !st.IsSuccess() {
					t.Errorf("status %v, want success", st)
				}
				return
			}
			if st.IsSuccess() || st.Message() != tt.want {
				t.Errorf("status %v, want %q", st, tt.want)
			}
		})
	}
}
