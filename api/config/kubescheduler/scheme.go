package kubescheduler

import (
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Scheme holds the configuration kind and every plugin args kind of
// kubescheduler.config.k8s.io/v1.
var Scheme = runtime.NewScheme()

func init() {
	if err := configv1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
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
