package interpodaffinity

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func term(key string, kv ...string) v1.PodAffinityTerm {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: m}, TopologyKey: key}
}

func TestFilter(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("a1", "4", "zone", "a"), plugintest.Node("a2", "4", "zone", "a"), plugintest.Node("b1", "4", "zone", "b")}
	db := plugintest.Pod("db", "", "a1", "app", "db")
	guard := plugintest.Pod("guard", "", "b1", "app", "guard")
	guard.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone", "app", "intruder")}}}

	affinity := func(terms ...v1.PodAffinityTerm) *v1.Affinity {
		return &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
	}
	anti := func(terms ...v1.PodAffinityTerm) *v1.Affinity {
		return &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
	}
	tests := []struct {
		name     string
		labels   []string
		affinity *v1.Affinity
		want     map[string]string
	}{
		{name: "affinity to db's zone", affinity: affinity(term("zone", "app", "db")), want: map[string]string{"a1": "", "a2": "", "b1": ErrReasonAffinityRulesNotMatch}},
		{name: "affinity to db's host", affinity: affinity(term(v1.LabelHostname, "app", "db")), want: map[string]string{"a1": "", "a2": ErrReasonAffinityRulesNotMatch}},
		{name: "anti-affinity to db's zone", affinity: anti(term("zone", "app", "db")), want: map[string]string{"a1": ErrReasonAntiAffinityRulesNotMatch, "a2": ErrReasonAntiAffinityRulesNotMatch, "b1": ""}},
		{name: "existing pod's anti-affinity", labels: []string{"app", "intruder"}, want: map[string]string{"a1": "", "b1": ErrReasonExistingAntiAffinityRulesNotMatch}},
		{name: "first of a self-affine group goes anywhere", labels: []string{"app", "new"}, affinity: affinity(term("zone", "app", "new")), want: map[string]string{"a1": "", "b1": ""}},
		{name: "affinity to nothing", affinity: affinity(term("zone", "app", "none")), want: map[string]string{"a1": ErrReasonAffinityRulesNotMatch}},
	}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, []*v1.Pod{db, guard})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.Pod("p", "", "", tt.labels...)
			p.Spec.Affinity = tt.affinity
			got, pre := h.Filter(t, p)
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

func TestMalformedTermIsAnErrorNotACrash(t *testing.T) {
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, []*v1.Node{plugintest.Node("a", "1", "zone", "a")}, nil)
	p := plugintest.Pod("p", "", "")
	bad := term("zone")
	bad.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}
	p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{bad}}}
	_, pre := h.Filter(t, p)
	if pre == nil || pre.Code().String() != "Error" {
		t.Fatalf("PreFilter status %v, want an Error", pre)
	}
}

func TestScorePreferredTerms(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("a1", "4", "zone", "a"), plugintest.Node("b1", "4", "zone", "b")}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, []*v1.Pod{plugintest.Pod("cache", "", "a1", "app", "cache")})
	p := plugintest.Pod("p", "", "")
	p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: term("zone", "app", "cache")}}}}
	if got := h.Score(t, p); got["a1"] != 100 || got["b1"] != 0 {
		t.Errorf("preferred affinity scores %v, want a1 100, b1 0", got)
	}
	q := plugintest.Pod("q", "", "")
	q.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: term("zone", "app", "cache")}}}}
	if got := h.Score(t, q); got["b1"] != 100 || got["a1"] != 0 {
		t.Errorf("preferred anti-affinity scores %v, want b1 100, a1 0", got)
	}
}

// BenchmarkPreFilter times PreFilter for a pod wanting its zone's web pods
// and no web pod on its host: with counts kept between cycles, mostly the
// cost of finding every node unchanged.
func BenchmarkPreFilter(b *testing.B) {
	pod := plugintest.Pod("incoming", "100m", "", "app", "web")
	pod.Spec.Affinity = &v1.Affinity{
		PodAffinity:     &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone", "app", "web")}},
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(v1.LabelHostname, "app", "web")}},
	}
	plugintest.BenchmarkPreFilter(b, framework.Registry{Name: New}, []string{Name}, pod)
}
