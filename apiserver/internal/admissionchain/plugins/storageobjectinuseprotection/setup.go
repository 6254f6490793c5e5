// Package storageobjectinuseprotection is the StorageObjectInUseProtection
// admission plugin: new claims and volumes get the finalizers that keep
// them until no pod uses them.
package storageobjectinuseprotection

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "StorageObjectInUseProtection"

// Register adds StorageObjectInUseProtection to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create)}, nil
	})
}
