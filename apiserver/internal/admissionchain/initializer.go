package admissionchain

import (
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"

	"trireme.dev/apiserver/internal/admissionchain/plugins/resourcequota"
)

// initializer hands plugins what the library's generic initializer does
// not: today the quota evaluators. It runs after the generic one, so a
// plugin has its informers and drain channel by then.
type initializer struct{}

func newInitializer() *initializer { return &initializer{} }

// Initialize implements admission.PluginInitializer.
func (i *initializer) Initialize(plugin admission.Interface) {
	if wants, ok := plugin.(genericinitializer.WantsQuotaConfiguration); ok {
		wants.SetQuotaConfiguration(resourcequota.AdmissionConfiguration())
	}
}
