// Package podresizevalidator is the PodResizeValidator admission plugin: a
// pods/resize request that can never succeed on the pod's node — the node
// runs Windows, where containers cannot be resized in place, or the pod
// would ask for more CPU or memory than the node can allocate at all — is
// refused at once instead of being accepted and left Infeasible by the
// kubelet.
package podresizevalidator

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "PodResizeValidator"

// Register adds PodResizeValidator to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}
