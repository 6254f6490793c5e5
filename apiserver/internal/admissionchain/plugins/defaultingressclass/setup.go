// Package defaultingressclass is the DefaultIngressClass admission plugin:
// a new Ingress naming no class gets the cluster's default IngressClass.
package defaultingressclass

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "DefaultIngressClass"

// Register adds DefaultIngressClass to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create)}, nil
	})
}
