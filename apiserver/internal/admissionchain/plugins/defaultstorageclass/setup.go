// Package defaultstorageclass is the DefaultStorageClass admission plugin:
// a new claim naming no storage class gets the cluster's default one.
package defaultstorageclass

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "DefaultStorageClass"

// Register adds DefaultStorageClass to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create)}, nil
	})
}
