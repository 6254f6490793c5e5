// Package extendedresourcetoleration is the ExtendedResourceToleration
// admission plugin: a pod asking for an extended resource (a GPU, say)
// tolerates the taint named after that resource, so nodes holding it can
// be reserved for such pods by tainting them.
package extendedresourcetoleration

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "ExtendedResourceToleration"

// Register adds ExtendedResourceToleration to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}
