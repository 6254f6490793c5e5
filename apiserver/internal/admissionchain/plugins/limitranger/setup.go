// Package limitranger is the LimitRanger admission plugin: the LimitRanges
// of a namespace give new pods' containers their default requests and
// limits, and refuse pods and claims outside their min, max and
// limit/request ratio.
package limitranger

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "LimitRanger"

// Register adds LimitRanger to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) { return newPlugin(), nil })
}
