package options

import (
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string // substring; empty means valid
		check   func(t *testing.T, cfg *configv1.KubeSchedulerConfiguration)
	}{
		{
			name: "minimal",
			data: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
		},
		{
			name: "two profiles and plugin args",
			data: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 30
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packer
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`,
			check: func(t *testing.T, cfg *configv1.KubeSchedulerConfiguration) {
				p := cfg.Profiles[1]
				for _, pc := range p.PluginConfig {
					if a, ok := pc.Args.Object.(*configv1.NodeResourcesFitArgs); ok {
						if a.ScoringStrategy.Type != configv1.MostAllocated || len(a.ScoringStrategy.Resources) != 2 {
							t.Errorf("fit args = %+v", a.ScoringStrategy)
						}
						return
					}
				}
				t.Errorf("no NodeResourcesFitArgs in %+v", p.PluginConfig)
			},
		},
		{
			name:    "unknown field",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparalelism: 3\n",
			wantErr: `unknown field "paralelism"`,
		},
		{
			name:    "unknown args field",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeigh: 3\n",
			wantErr: `unknown field "hardPodAffinityWeigh"`,
		},
		{
			name:    "negative parallelism",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: -1\n",
			wantErr: "parallelism: Invalid value: -1",
		},
		{
			name:    "percentage out of range",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 101\n",
			wantErr: "percentageOfNodesToScore: Invalid value: 101",
		},
		{
			name:    "duplicate scheduler name",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n- schedulerName: a\n",
			wantErr: "profiles[1].schedulerName: Duplicate value",
		},
		{
			name:    "bad scoring strategy",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Random\n",
			wantErr: "profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value",
		},
		{
			name:    "backoff inverted",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npodInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
			wantErr: "podMaxBackoffSeconds",
		},
		{
			name:    "wrong kind",
			data:    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: NodeAffinityArgs\n",
			wantErr: "want KubeSchedulerConfiguration",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := configKind.Decode([]byte(tt.data))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if tt.check != nil {
					tt.check(t, cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzDecode checks that no input makes decoding, defaulting or
// validation panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"))
	f.Add([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: x\n  pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n"))
	f.Add([]byte(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","parallelism":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = configKind.Decode(data)
	})
}
