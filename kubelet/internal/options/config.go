package options

import (
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	kubeletconfig "trireme.dev/api/config/kubelet"
	"trireme.dev/componentbase/configfile"
)

// configKind reads --config: a KubeletConfiguration, strictly decoded and
// defaulted. Complete validates it once the flags are applied over it.
var configKind = configfile.Kind[*kubeletv1beta1.KubeletConfiguration]{
	Scheme:  kubeletconfig.Scheme,
	Default: kubeletconfig.SetDefaults,
}
