// Package alwaysadmit is the AlwaysAdmit admission plugin: it admits
// everything. Upstream keeps it, deprecated, for old flag lists.
package alwaysadmit

import (
	"context"
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "AlwaysAdmit"

// Register adds AlwaysAdmit to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) { return Plugin{}, nil })
}

// Plugin admits every request.
type Plugin struct{}

// Handles implements admission.Interface: every operation.
func (Plugin) Handles(admission.Operation) bool { return true }

// Admit implements admission.MutationInterface.
func (Plugin) Admit(context.Context, admission.Attributes, admission.ObjectInterfaces) error {
	return nil
}

// Validate implements admission.ValidationInterface.
func (Plugin) Validate(context.Context, admission.Attributes, admission.ObjectInterfaces) error {
	return nil
}
