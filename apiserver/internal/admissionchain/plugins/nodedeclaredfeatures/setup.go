// Package nodedeclaredfeatures is the NodeDeclaredFeatureValidator
// admission plugin: an update of a bound pod that needs a node feature
// (resizing pod-level resources, non-sidecar init containers or
// memory-backed volumes, ...) is refused when the pod's node does not list
// that feature in status.declaredFeatures. The features and how a pod
// change needs them come from k8s.io/component-helpers/nodedeclaredfeatures,
// the same registry the kubelet declares from.
//
// Nodes that declare no features at all (kubelets that predate feature
// declaration) are not judged: refusing every update of their pods would
// break them, and upstream clusters without the NodeDeclaredFeatures gate
// behave the same way.
package nodedeclaredfeatures

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "NodeDeclaredFeatureValidator"

// Register adds NodeDeclaredFeatureValidator to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}
