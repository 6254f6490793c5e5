// Package podsecurity is the PodSecurity admission plugin: the Pod Security
// Standards of k8s.io/pod-security-admission, enforced, audited and warned
// per namespace from its pod-security.kubernetes.io/* labels, with cluster
// defaults and exemptions from the PodSecurity entry of
// --admission-control-config-file.
package podsecurity

import (
	"fmt"
	"io"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/pod-security-admission/admission/api/load"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "PodSecurity"

// Register adds PodSecurity to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(config io.Reader) (admission.Interface, error) {
		cfg, err := load.LoadFromReader(config)
		if err != nil {
			return nil, fmt.Errorf("load PodSecurity configuration: %w", err)
		}
		return newPlugin(cfg)
	})
}
