// Package admissionchain builds the admission chain every write passes
// through. Today: NamespaceLifecycle, which refuses objects in missing or
// terminating namespaces. The other upstream plugins plug in here, in
// upstream's order.
package admissionchain

import (
	"fmt"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// Options are the admission flags.
type Options struct{}

// NewOptions returns the defaults.
func NewOptions() *Options { return &Options{} }

// AddFlags registers the options on fs.
func (o *Options) AddFlags(*pflag.FlagSet) {}

// ApplyTo sets config's admission chain; plugins read the cluster through
// client and factory.
func (o *Options) ApplyTo(config *genericapiserver.Config, client kubernetes.Interface, factory informers.SharedInformerFactory) error {
	plugin, err := lifecycle.NewLifecycle(sets.New(metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic))
	if err != nil {
		return err
	}
	plugin.SetExternalKubeClientSet(client)
	plugin.SetExternalKubeInformerFactory(factory)
	if err := plugin.ValidateInitialization(); err != nil {
		return fmt.Errorf("admission NamespaceLifecycle: %w", err)
	}
	config.AdmissionControl = admission.NewChainHandler(plugin)
	return nil
}
