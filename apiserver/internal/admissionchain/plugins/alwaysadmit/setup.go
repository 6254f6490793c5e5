// Package alwaysadmit is the AlwaysAdmit admission plugin: it admits
// everything. Upstream keeps it, deprecated, for old flag lists.
package alwaysadmit

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "AlwaysAdmit"

// Register adds AlwaysAdmit to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) { return Plugin{}, nil })
}
