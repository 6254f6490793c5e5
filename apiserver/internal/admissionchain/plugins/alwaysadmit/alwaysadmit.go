package alwaysadmit

import (
	"context"

	"k8s.io/apiserver/pkg/admission"
)

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
