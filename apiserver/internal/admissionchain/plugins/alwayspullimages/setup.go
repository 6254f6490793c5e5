// Package alwayspullimages is the AlwaysPullImages admission plugin: every
// container pulls its image, so a pod can only run images its pull
// credentials can fetch, not ones cached on the node for another tenant.
package alwayspullimages

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "AlwaysPullImages"

// Register adds AlwaysPullImages to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}
