// Package pvcresize is the PersistentVolumeClaimResize admission plugin: a
// claim may grow only once bound, and only if its storage class allows
// volume expansion.
package pvcresize

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "PersistentVolumeClaimResize"

// Register adds PersistentVolumeClaimResize to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Update)}, nil
	})
}
