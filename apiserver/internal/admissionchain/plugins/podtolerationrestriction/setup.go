// Package podtolerationrestriction is the PodTolerationRestriction admission
// plugin: a namespace's default tolerations
// (scheduler.alpha.kubernetes.io/defaultTolerations) are merged into its
// pods, and pods may only carry tolerations its whitelist
// (scheduler.alpha.kubernetes.io/tolerationsWhitelist) allows. Namespaces
// without annotations use the cluster-wide default and whitelist of the
// plugin's configuration (kind Configuration,
// podtolerationrestriction.admission.k8s.io/v1alpha1).
package podtolerationrestriction

import (
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "PodTolerationRestriction"

// Register adds PodTolerationRestriction to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(config io.Reader) (admission.Interface, error) {
		cfg, err := readConfig(config)
		if err != nil {
			return nil, err
		}
		return newPlugin(cfg), nil
	})
}

// config is the plugin's cluster-wide configuration.
type config struct {
	Default   []corev1.Toleration `json:"default,omitempty"`
	Whitelist []corev1.Toleration `json:"whitelist,omitempty"`
}

func readConfig(r io.Reader) (*config, error) {
	cfg := &config{}
	if r == nil {
		return cfg, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read PodTolerationRestriction configuration: %w", err)
	}
	if err := yaml.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("parse PodTolerationRestriction configuration: %w", err)
	}
	return cfg, nil
}
