// Package alwaysdeny is the AlwaysDeny admission plugin: it refuses every
// write. Upstream keeps it, deprecated, for testing.
package alwaysdeny

import (
	"context"
	"errors"
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "AlwaysDeny"

// Register adds AlwaysDeny to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) { return Plugin{}, nil })
}

// Plugin refuses every request.
type Plugin struct{}

// Handles implements admission.Interface: every operation.
func (Plugin) Handles(admission.Operation) bool { return true }

// Admit implements admission.MutationInterface.
func (Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	return admission.NewForbidden(a, errors.New("admission control is denying all modifications"))
}

// Validate implements admission.ValidationInterface.
func (Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	return admission.NewForbidden(a, errors.New("admission control is denying all modifications"))
}
