// Package priority is the Priority admission plugin: a pod's
// priorityClassName becomes its priority value and preemption policy; a pod
// naming no class gets the cluster's globalDefault class, or priority 0.
// It also keeps PriorityClasses to one globalDefault.
package priority

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "Priority"

// Register adds Priority to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}
