package options

import (
	configv1 "k8s.io/kube-scheduler/config/v1"

	"trireme.dev/api/config/kubescheduler"
	"trireme.dev/componentbase/configfile"
)

// configKind reads --config: a KubeSchedulerConfiguration with its
// plugins' args, strictly decoded, defaulted and validated, as
// kube-scheduler reads it.
var configKind = configfile.Kind[*configv1.KubeSchedulerConfiguration]{
	Scheme:  kubescheduler.Scheme,
	Default: kubescheduler.SetDefaults,
	Validate: func(cfg *configv1.KubeSchedulerConfiguration) error {
		return kubescheduler.Validate(cfg).ToAggregate()
	},
}

// LoadConfig reads the --config file at path.
func LoadConfig(path string) (*configv1.KubeSchedulerConfiguration, error) {
	return configKind.Load(path)
}
