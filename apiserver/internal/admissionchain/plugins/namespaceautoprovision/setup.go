// Package namespaceautoprovision is the NamespaceAutoProvision admission
// plugin: creating an object in a missing namespace creates the namespace.
package namespaceautoprovision

import (
	"io"

	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "NamespaceAutoProvision"

// Register adds NamespaceAutoProvision to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Namespaces: namespacelookup.New(admission.Create)}, nil
	})
}
