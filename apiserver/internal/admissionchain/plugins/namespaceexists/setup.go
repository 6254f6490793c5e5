// Package namespaceexists is the NamespaceExists admission plugin: requests
// in a namespace that does not exist are refused.
package namespaceexists

import (
	"io"

	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "NamespaceExists"

// Register adds NamespaceExists to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Namespaces: namespacelookup.New(admission.Create, admission.Update, admission.Delete)}, nil
	})
}
