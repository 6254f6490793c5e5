// Package nodetaint is the TaintNodesByCondition admission plugin: a node
// registers tainted not-ready, so nothing is scheduled to it before the
// node lifecycle controller has seen it ready.
package nodetaint

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "TaintNodesByCondition"

// Register adds TaintNodesByCondition to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create)}, nil
	})
}
