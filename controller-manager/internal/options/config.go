package options

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/configfile"
)

// Leader election and client defaults are kube-controller-manager's, which
// differ from component-base's recommendations (endpoints lock, 50 QPS).
const (
	defaultLeaseName      = "kube-controller-manager"
	defaultLeaseNamespace = "kube-system"
	defaultQPS            = 20
	defaultBurst          = 30
)

// configScheme knows the one kind --config accepts.
var configScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := kcmconfig.AddToScheme(s); err != nil {
		panic(fmt.Sprintf("install %s: %v", kcmconfig.SchemeGroupVersion, err))
	}
	return s
}()

// configKind reads --config: a KubeControllerManagerConfiguration
// (kubecontrollermanager.config.k8s.io/v1alpha1) in YAML or JSON,
// defaulted. Unknown and duplicate fields are errors: a misspelt field
// silently ignored is worse than a refusal to start. The published kind
// has no json tags on its own fields, so their keys are spelt as the Go
// fields are (Generic, ResourceQuotaController, ...).
var configKind = configfile.Kind[*kcmconfig.KubeControllerManagerConfiguration]{
	Scheme:  configScheme,
	Default: SetDefaults,
}

// LoadConfig reads the --config file at path.
func LoadConfig(path string) (*kcmconfig.KubeControllerManagerConfiguration, error) {
	return configKind.Load(path)
}

// DefaultConfig returns the configuration with every default applied, as
// if read from an empty file.
func DefaultConfig() *kcmconfig.KubeControllerManagerConfiguration {
	cfg := &kcmconfig.KubeControllerManagerConfiguration{}
	cfg.APIVersion = kcmconfig.SchemeGroupVersion.String()
	cfg.Kind = "KubeControllerManagerConfiguration"
	SetDefaults(cfg)
	return cfg
}

// SetDefaults fills the fields this controller-manager uses and that cfg
// leaves empty with kube-controller-manager's defaults. Fields of
// controllers not implemented here are left as they are.
func SetDefaults(cfg *kcmconfig.KubeControllerManagerConfiguration) {
	g := &cfg.Generic
	if g.MinResyncPeriod.Duration == 0 {
		g.MinResyncPeriod = metav1.Duration{Duration: 12 * time.Hour}
	}
	if len(g.Controllers) == 0 {
		g.Controllers = []string{"*"}
	}
	cc := &g.ClientConnection
	if cc.QPS == 0 {
		cc.QPS = defaultQPS
	}
	if cc.Burst == 0 {
		cc.Burst = defaultBurst
	}
	componentbaseconfig.RecommendedDefaultClientConnectionConfiguration(cc)
	le := &g.LeaderElection
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	if le.ResourceName == "" {
		le.ResourceName = defaultLeaseName
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = defaultLeaseNamespace
	}
	componentbaseconfig.RecommendedDefaultLeaderElectionConfiguration(le)
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	if g.Debugging.EnableProfiling == nil {
		// On, as upstream's default: the secure port authorizes
		// /debug/pprof through the apiserver.
		g.Debugging.EnableProfiling = ptr.To(true)
	}
	rq := &cfg.ResourceQuotaController
	if rq.ResourceQuotaSyncPeriod.Duration == 0 {
		rq.ResourceQuotaSyncPeriod = metav1.Duration{Duration: 5 * time.Minute}
	}
	if rq.ConcurrentResourceQuotaSyncs == 0 {
		rq.ConcurrentResourceQuotaSyncs = 5
	}
	setServiceAndClusterDefaults(cfg)
	setWorkloadDefaults(cfg)
	setNodeDefaults(cfg)
}
