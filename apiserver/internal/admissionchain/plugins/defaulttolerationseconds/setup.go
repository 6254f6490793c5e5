// Package defaulttolerationseconds is the DefaultTolerationSeconds admission
// plugin: a pod that does not say otherwise tolerates its node being
// not-ready or unreachable for five minutes before it is evicted.
package defaulttolerationseconds

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "DefaultTolerationSeconds"

// Register adds DefaultTolerationSeconds to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		// On updates too, as upstream's: a spec that replaces the
		// tolerations gets the defaults back instead of being refused
		// for removing them (existing tolerations may not go).
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), seconds: defaultSeconds}, nil
	})
}
