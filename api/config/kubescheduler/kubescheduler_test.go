package kubescheduler

import (
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

func TestDefault(t *testing.T) {
	cfg := Default()
	if errs := Validate(cfg); len(errs) > 0 {
		t.Fatalf("default configuration is invalid: %v", errs)
	}
	if got := *cfg.Profiles[0].SchedulerName; got != "default-scheduler" {
		t.Errorf("schedulerName = %q, want default-scheduler", got)
	}
	if *cfg.Parallelism != 16 || *cfg.PercentageOfNodesToScore != 0 || *cfg.PodInitialBackoffSeconds != 1 || *cfg.PodMaxBackoffSeconds != 10 {
		t.Errorf("unexpected scalar defaults: %+v", cfg)
	}
	if cfg.LeaderElection.ResourceName != "kube-scheduler" || cfg.LeaderElection.ResourceNamespace != "kube-system" {
		t.Errorf("lease = %s/%s", cfg.LeaderElection.ResourceNamespace, cfg.LeaderElection.ResourceName)
	}
	weights := map[string]int32{}
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		if p.Weight != nil {
			weights[p.Name] = *p.Weight
		}
	}
	for name, want := range map[string]int32{TaintToleration: 3, NodeAffinity: 2, PodTopologySpread: 2, InterPodAffinity: 2, NodeResourcesFit: 1, ImageLocality: 1} {
		if weights[name] != want {
			t.Errorf("weight of %s = %d, want %d", name, weights[name], want)
		}
	}
	var fit *configv1.NodeResourcesFitArgs
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if a, ok := pc.Args.Object.(*configv1.NodeResourcesFitArgs); ok {
			fit = a
		}
	}
	if fit == nil || fit.ScoringStrategy.Type != configv1.LeastAllocated || len(fit.ScoringStrategy.Resources) != 2 {
		t.Errorf("NodeResourcesFitArgs not defaulted: %+v", fit)
	}
}

func TestMergePlugins(t *testing.T) {
	w := int32(5)
	custom := &configv1.Plugins{
		MultiPoint: configv1.PluginSet{
			Enabled:  []configv1.Plugin{{Name: ImageLocality, Weight: &w}, {Name: "Custom"}},
			Disabled: []configv1.Plugin{{Name: VolumeBinding}},
		},
		Score: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}},
	}
	got := mergePlugins(DefaultPlugins(), custom)
	var names []string
	for _, p := range got.MultiPoint.Enabled {
		names = append(names, p.Name)
		if p.Name == ImageLocality && *p.Weight != 5 {
			t.Errorf("ImageLocality weight = %d, want 5", *p.Weight)
		}
	}
	joined := strings.Join(names, ",")
	if strings.Contains(joined, VolumeBinding+",") || !strings.HasSuffix(joined, ",Custom") {
		t.Errorf("multiPoint = %s", joined)
	}
	if len(got.Score.Disabled) != 1 || got.Score.Disabled[0].Name != "*" {
		t.Errorf("score.disabled = %+v", got.Score.Disabled)
	}
}
