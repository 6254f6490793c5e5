package nodestatus

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/dranodeallocatableresources"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/draoptionalnodeoperations"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/extendwebsocketstokubelet"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/inplacepodresize"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/restartallcontainers"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/usernamespaceshostnetwork"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/volumebindmountoptions"
	ndftypes "k8s.io/component-helpers/nodedeclaredfeatures/types"
)

// supportedFeatures says, for each feature gate a declared node feature
// depends on, whether this kubelet implements the behaviour: the gate is
// "on" only for what the pod workers really do, so that the scheduler's
// NodeDeclaredFeatures filter keeps pods that need more off this node.
var supportedFeatures = ndftypes.FeatureGateMap{
	// Container restart rules (restartPolicyRules, RestartAllContainers):
	// containers restart by the pod's restartPolicy only.
	restartallcontainers.RestartAllContainersOnContainerExits: false,
	restartallcontainers.RestartRulesFeatureGate:              false,
	// In-place resize: resources are set when a container is created;
	// resizes are not applied to running containers.
	inplacepodresize.IPPRPodLevelResourcesFeatureGate:   false,
	inplacepodresize.IPPRInitContainersFeatureGate:      false,
	inplacepodresize.IPPRMemoryBackedVolumesFeatureGate: false,
	// The node server speaks SPDY; WebSocket clients go through the
	// apiserver's translator.
	extendwebsocketstokubelet.ExtendWebSocketsToKubeletFeatureGate: false,
	// No user namespaces (hostUsers: false) and no DRA.
	usernamespaceshostnetwork.UserNamespacesHostNetworkSupportFeatureGate: false,
	dranodeallocatableresources.DRANodeAllocatableResourcesFeature:        false,
	draoptionalnodeoperations.DRAOptionalNodeOperationsFeatureGate:        false,
	// Volume mounts carry no extra bind mount options.
	volumebindmountoptions.VolumeBindMountOptionsFeatureGate: false,
}

// DeclaredFeatures is the node's status.declaredFeatures: the features
// of k8s.io/component-helpers/nodedeclaredfeatures this kubelet (at
// kubeletVersion, on a runtime with runtimeFeatures) provides, sorted; nil
// when none.
func DeclaredFeatures(kubeletVersion string, runtimeFeatures ndftypes.RuntimeFeatures) []string {
	cfg := &ndftypes.NodeConfiguration{FeatureGates: supportedFeatures, RuntimeFeatures: runtimeFeatures}
	if v, err := version.Parse(kubeletVersion); err == nil {
		cfg.Version = v.WithPreRelease("").WithBuildMetadata("")
	}
	return nodedeclaredfeatures.DefaultFramework.DiscoverNodeFeatures(cfg)
}
