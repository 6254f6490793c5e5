// Package antiaffinity is the LimitPodHardAntiAffinityTopology admission
// plugin: a pod's required anti-affinity may only spread over hosts
// (kubernetes.io/hostname), so one pod cannot claim a whole zone.
package antiaffinity

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "LimitPodHardAntiAffinityTopology"

// Register adds LimitPodHardAntiAffinityTopology to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}
