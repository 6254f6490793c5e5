package podtopologyspread

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func spread(p *v1.Pod, key string, skew int32, when v1.UnsatisfiableConstraintAction) *v1.Pod {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: when,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	})
	return p
}

func TestFilter(t *testing.T) {
	nodes := []*v1.Node{
		plugintest.Node("a1", "4", "zone", "a"), plugintest.Node("a2", "4", "zone", "a"),
		plugintest.Node("b1", "4", "zone", "b"), plugintest.Node("nozone", "4"),
	}
	pods := []*v1.Pod{
		plugintest.Pod("w1", "", "a1", "app", "web"), plugintest.Pod("w2", "", "a2", "app", "web"),
		plugintest.Pod("other", "", "b1", "app", "db"),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]string
	}{
		{
			name: "zone skew 1: only the emptier zone",
			pod:  spread(plugintest.Pod("p", "", "", "app", "web"), "zone", 1, v1.DoNotSchedule),
			want: map[string]string{"a1": ErrReasonConstraintsNotMatch, "a2": ErrReasonConstraintsNotMatch, "b1": "", "nozone": ErrReasonNodeLabelNotMatch},
		},
		{
			name: "zone skew 3 allows either",
			pod:  spread(plugintest.Pod("p", "", "", "app", "web"), "zone", 3, v1.DoNotSchedule),
			want: map[string]string{"a1": "", "b1": ""},
		},
		{
			name: "hostname skew 1",
			pod:  spread(plugintest.Pod("p", "", "", "app", "web"), v1.LabelHostname, 1, v1.DoNotSchedule),
			want: map[string]string{"a1": ErrReasonConstraintsNotMatch, "b1": ""},
		},
		{
			name: "ScheduleAnyway does not filter",
			pod:  spread(plugintest.Pod("p", "", "", "app", "web"), "zone", 1, v1.ScheduleAnyway),
			want: map[string]string{"a1": "", "b1": "", "nozone": ""},
		},
	}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, pods)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pre := h.Filter(t, tt.pod)
			if pre != nil {
				t.Fatalf("PreFilter: %v", pre)
			}
			for n, want := range tt.want {
				st := got[n]
				if want == "" && !st.IsSuccess() || want != "" && (st.IsSuccess() || st.Message() != want) {
					t.Errorf("node %s: %v, want %q", n, st, want)
				}
			}
		})
	}
}

func TestMinDomains(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("a1", "4", "zone", "a"), plugintest.Node("b1", "4", "zone", "b")}
	pods := []*v1.Pod{plugintest.Pod("w1", "", "a1", "app", "web"), plugintest.Pod("w2", "", "b1", "app", "web")}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, pods)
	p := spread(plugintest.Pod("p", "", "", "app", "web"), "zone", 1, v1.DoNotSchedule)
	p.Spec.TopologySpreadConstraints[0].MinDomains = ptr.To[int32](3)
	// Fewer domains than minDomains: the global minimum counts as 0, so
	// each zone already holds maxSkew pods.
	got, _ := h.Filter(t, p)
	if got["a1"].IsSuccess() || got["b1"].IsSuccess() {
		t.Errorf("with minDomains 3 over 2 zones the pod should not fit: %v", got)
	}
}

func TestScorePrefersEmptierDomains(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("a1", "4", "zone", "a"), plugintest.Node("b1", "4", "zone", "b")}
	pods := []*v1.Pod{plugintest.Pod("w1", "", "a1", "app", "web"), plugintest.Pod("w2", "", "a1", "app", "web")}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, pods)
	got := h.Score(t, spread(plugintest.Pod("p", "", "", "app", "web"), "zone", 1, v1.ScheduleAnyway))
	if got["b1"] <= got["a1"] {
		t.Errorf("scores %v: want the empty zone higher", got)
	}
}

// BenchmarkPreFilter times PreFilter for a pod spread over zones and hosts,
// whose domain counts are kept between cycles.
func BenchmarkPreFilter(b *testing.B) {
	pod := spread(spread(plugintest.Pod("incoming", "100m", "", "app", "web"), "zone", 1, v1.DoNotSchedule), v1.LabelHostname, 1, v1.DoNotSchedule)
	plugintest.BenchmarkPreFilter(b, framework.Registry{Name: New}, []string{Name}, pod)
}
