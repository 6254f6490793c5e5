// Package ownerreferences is the OwnerReferencesPermissionEnforcement
// admission plugin: setting an owner reference needs permission to delete
// the object (the garbage collector will delete it on the owner's behalf),
// and setting blockOwnerDeletion needs permission to update the owner's
// finalizers (it delays the owner's deletion).
package ownerreferences

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "OwnerReferencesPermissionEnforcement"

// Register adds OwnerReferencesPermissionEnforcement to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}
