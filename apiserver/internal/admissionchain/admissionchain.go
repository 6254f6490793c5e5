// Package admissionchain builds the admission chain every write passes
// through: upstream's plugins, in upstream's order, with upstream's
// default-on set, switched by --enable-admission-plugins and
// --disable-admission-plugins and configured by
// --admission-control-config-file. Plugins live one per folder under
// plugins/ and register themselves in registrations.
package admissionchain

import (
	"fmt"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// Options are the admission flags: upstream's own option set, with
// Trireme's plugins registered in it.
type Options struct {
	*genericoptions.AdmissionOptions
}

// NewOptions returns upstream's defaults: every plugin registered, the
// default-on set enabled.
func NewOptions() *Options {
	o := genericoptions.NewAdmissionOptions()
	// NewAdmissionOptions registers the library plugins (namespace
	// lifecycle, policies, webhooks); ours join them.
	for _, register := range registrations {
		register(o.Plugins)
	}
	o.RecommendedPluginOrder, o.DefaultOffPlugins = order(o.Plugins.Registered())
	return &Options{AdmissionOptions: o}
}

// AddFlags registers --enable-admission-plugins,
// --disable-admission-plugins and --admission-control-config-file on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) { o.AdmissionOptions.AddFlags(fs) }

// EnabledPlugins returns the plugins the flags turn on, in chain order.
func (o *Options) EnabledPlugins() []string {
	off := o.DefaultOffPlugins.Clone().Insert(o.DisablePlugins...).Delete(o.EnablePlugins...)
	var out []string
	for _, name := range o.RecommendedPluginOrder {
		if !off.Has(name) {
			out = append(out, name)
		}
	}
	return out
}

// ApplyTo sets config's admission chain. Plugins read the cluster through
// client and factory (started by the server's post-start hook), authorize
// through config's authorizer, and talk to webhooks and policies' params
// through a dynamic client on the loopback connection. Webhooks named by a
// Service are reached where resolver says (the Service's ClusterIP or one
// of its endpoints), as upstream's apiserver does: the host need not
// resolve cluster DNS names.
func (o *Options) ApplyTo(config *genericapiserver.Config, client kubernetes.Interface, factory informers.SharedInformerFactory, resolver webhook.ServiceResolver) error {
	if errs := o.Validate(); len(errs) > 0 {
		return fmt.Errorf("admission options: %w", utilerrors.NewAggregate(errs))
	}
	dyn, err := dynamic.NewForConfig(config.LoopbackClientConfig)
	if err != nil {
		return fmt.Errorf("admission dynamic client: %w", err)
	}
	authWrapper := webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, config.EgressSelector, config.LoopbackClientConfig, config.TracerProvider)
	if err := o.AdmissionOptions.ApplyTo(config, factory, client, dyn, utilfeature.DefaultFeatureGate, config.EffectiveVersion,
		newInitializer(), webhookinit.NewPluginInitializer(authWrapper, resolver)); err != nil {
		return fmt.Errorf("admission chain: %w", err)
	}
	return nil
}

var _ admission.PluginInitializer = (*initializer)(nil)
