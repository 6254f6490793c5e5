// Package podnodeselector is the PodNodeSelector admission plugin: a
// namespace's scheduler.alpha.kubernetes.io/node-selector annotation (or
// the cluster default from the plugin's configuration) is merged into its
// pods' nodeSelector, and pods may only select labels the namespace's
// whitelist allows.
//
// Its configuration, in the PodNodeSelector entry of
// --admission-control-config-file, keeps upstream's shape:
//
//	podNodeSelectorPluginConfig:
//	  clusterDefaultNodeSelector: env=prod
//	  team-a: env=dev,zone=a
package podnodeselector

import (
	"fmt"
	"io"

	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "PodNodeSelector"

// Register adds PodNodeSelector to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(config io.Reader) (admission.Interface, error) {
		whitelists, err := readConfig(config)
		if err != nil {
			return nil, err
		}
		return newPlugin(whitelists), nil
	})
}

// clusterDefaultKey holds the selector of namespaces without annotation.
const clusterDefaultKey = "clusterDefaultNodeSelector"

func readConfig(r io.Reader) (map[string]string, error) {
	if r == nil {
		return map[string]string{}, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read PodNodeSelector configuration: %w", err)
	}
	var cfg struct {
		PodNodeSelectorPluginConfig map[string]string `json:"podNodeSelectorPluginConfig"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("parse PodNodeSelector configuration: %w", err)
	}
	if cfg.PodNodeSelectorPluginConfig == nil {
		return map[string]string{}, nil
	}
	return cfg.PodNodeSelectorPluginConfig, nil
}
