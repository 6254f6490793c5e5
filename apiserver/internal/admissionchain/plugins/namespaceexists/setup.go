// Package namespaceexists is the NamespaceExists admission plugin: requests
// in a namespace that does not exist are refused.
package namespaceexists

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "NamespaceExists"

// Register adds NamespaceExists to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}, nil
	})
}
