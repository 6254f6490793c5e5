package alwaysdeny

import (
	"context"
	"errors"

	"k8s.io/apiserver/pkg/admission"
)

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
