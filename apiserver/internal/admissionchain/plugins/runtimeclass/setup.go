// Package runtimeclass is the RuntimeClass admission plugin: a pod naming a
// RuntimeClass gets its pod overhead and its scheduling constraints (node
// selector, tolerations), and is refused if the class does not exist.
package runtimeclass

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "RuntimeClass"

// Register adds RuntimeClass to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create)}, nil
	})
}
