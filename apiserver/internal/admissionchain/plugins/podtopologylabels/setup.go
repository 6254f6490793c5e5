// Package podtopologylabels is the PodTopologyLabels admission plugin: when
// a pod is bound to a node, the node's topology.kubernetes.io/zone and
// region labels are copied onto the pod, so workloads can read where they
// run through the downward API without permission to read Nodes.
package podtopologylabels

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "PodTopologyLabels"

// Register adds PodTopologyLabels to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create)}, nil
	})
}
