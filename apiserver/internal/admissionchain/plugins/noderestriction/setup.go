// Package noderestriction is the NodeRestriction admission plugin: a
// kubelet (user system:node:<name> in group system:nodes) may modify only
// its own Node, Lease and CSINode, create only mirror pods bound to itself,
// update the status of and evict or delete only pods bound to it, and
// request tokens only for its own pods. Off by default; the installer turns
// it on, as kubeadm does.
package noderestriction

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "NodeRestriction"

// Register adds NodeRestriction to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}, nil
	})
}
