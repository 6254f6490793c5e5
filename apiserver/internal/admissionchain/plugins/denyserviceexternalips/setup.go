// Package denyserviceexternalips is the DenyServiceExternalIPs admission
// plugin: no new Service external IPs, which would let a tenant capture
// traffic to any address (CVE-2020-8554). Existing ones may stay or go.
package denyserviceexternalips

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "DenyServiceExternalIPs"

// Register adds DenyServiceExternalIPs to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}
