package kubescheduler

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Scheme holds the configuration kind and every plugin args kind of
// kubescheduler.config.k8s.io/v1.
var Scheme = runtime.NewScheme()

var codecs serializer.CodecFactory

func init() {
	if err := configv1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	codecs = serializer.NewCodecFactory(Scheme, serializer.EnableStrict)
}

// LoadFile reads, decodes, defaults and validates the configuration file at
// path.
func LoadFile(path string) (*configv1.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scheduler configuration: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	SetDefaults(cfg)
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("%s: invalid KubeSchedulerConfiguration: %w", path, errs.ToAggregate())
	}
	return cfg, nil
}

// Decode strictly decodes a YAML or JSON KubeSchedulerConfiguration,
// including each pluginConfig's args into its typed kind: unknown or
// duplicate fields are errors, as they are for kube-scheduler.
func Decode(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	obj, gvk, err := codecs.UniversalDecoder(configv1.SchemeGroupVersion).Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode scheduler configuration: %w", err)
	}
	cfg, ok := obj.(*configv1.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("decode scheduler configuration: got %s, want KubeSchedulerConfiguration", gvk)
	}
	if err := cfg.DecodeNestedObjects(codecs.UniversalDecoder(configv1.SchemeGroupVersion)); err != nil {
		return nil, fmt.Errorf("decode scheduler configuration: %w", err)
	}
	return cfg, nil
}

// Default returns the configuration kube-scheduler runs with when given no
// file: one profile, default-scheduler, with the default plugins.
func Default() *configv1.KubeSchedulerConfiguration {
	cfg := &configv1.KubeSchedulerConfiguration{}
	cfg.APIVersion = configv1.SchemeGroupVersion.String()
	cfg.Kind = "KubeSchedulerConfiguration"
	SetDefaults(cfg)
	return cfg
}
