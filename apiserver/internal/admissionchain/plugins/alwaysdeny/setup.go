// Package alwaysdeny is the AlwaysDeny admission plugin: it refuses every
// write. Upstream keeps it, deprecated, for testing.
package alwaysdeny

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "AlwaysDeny"

// Register adds AlwaysDeny to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) { return Plugin{}, nil })
}
