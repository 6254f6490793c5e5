package nodestatus

import (
	"slices"
	"testing"

	"k8s.io/component-helpers/nodedeclaredfeatures/features/restartallcontainers"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/volumebindmountoptions"
	ndftypes "k8s.io/component-helpers/nodedeclaredfeatures/types"
)

func TestDeclaredFeatures(t *testing.T) {
	tests := []struct {
		name    string
		enable  []string
		runtime ndftypes.RuntimeFeatures
		want    []string
	}{
		{name: "what this kubelet implements", want: nil},
		{name: "a gate-only feature", enable: []string{restartallcontainers.RestartAllContainersOnContainerExits}, want: []string{restartallcontainers.RestartAllContainersOnContainerExits}},
		{name: "runtime support missing", enable: []string{volumebindmountoptions.VolumeBindMountOptionsFeatureGate}, want: nil},
		{name: "runtime support present", enable: []string{volumebindmountoptions.VolumeBindMountOptionsFeatureGate}, runtime: ndftypes.RuntimeFeatures{MountOptions: true}, want: []string{volumebindmountoptions.VolumeBindMountOptionsFeatureName}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := supportedFeatures
			supportedFeatures = ndftypes.FeatureGateMap{}
			for k, v := range saved {
				supportedFeatures[k] = v
			}
			for _, g := range tt.enable {
				supportedFeatures[g] = true
			}
			defer func() { supportedFeatures = saved }()
			got := DeclaredFeatures("v1.37.0-trireme.abc123", tt.runtime)
			if !slices.Equal(got, tt.want) {
				t.Errorf("DeclaredFeatures = %v, want %v", got, tt.want)
			}
		})
	}
}
