package admissionchain

import (
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/plugins/alwaysadmit"
	"trireme.dev/apiserver/internal/admissionchain/plugins/alwaysdeny"
	"trireme.dev/apiserver/internal/admissionchain/plugins/alwayspullimages"
	"trireme.dev/apiserver/internal/admissionchain/plugins/antiaffinity"
	"trireme.dev/apiserver/internal/admissionchain/plugins/certapproval"
	"trireme.dev/apiserver/internal/admissionchain/plugins/certsigning"
	"trireme.dev/apiserver/internal/admissionchain/plugins/certsubjectrestriction"
	"trireme.dev/apiserver/internal/admissionchain/plugins/ctbattest"
	"trireme.dev/apiserver/internal/admissionchain/plugins/defaultingressclass"
	"trireme.dev/apiserver/internal/admissionchain/plugins/defaultstorageclass"
	"trireme.dev/apiserver/internal/admissionchain/plugins/defaulttolerationseconds"
	"trireme.dev/apiserver/internal/admissionchain/plugins/denyserviceexternalips"
	"trireme.dev/apiserver/internal/admissionchain/plugins/eventratelimit"
	"trireme.dev/apiserver/internal/admissionchain/plugins/extendedresourcetoleration"
	"trireme.dev/apiserver/internal/admissionchain/plugins/limitranger"
	"trireme.dev/apiserver/internal/admissionchain/plugins/namespaceautoprovision"
	"trireme.dev/apiserver/internal/admissionchain/plugins/namespaceexists"
	"trireme.dev/apiserver/internal/admissionchain/plugins/nodedeclaredfeatures"
	"trireme.dev/apiserver/internal/admissionchain/plugins/noderestriction"
	"trireme.dev/apiserver/internal/admissionchain/plugins/nodetaint"
	"trireme.dev/apiserver/internal/admissionchain/plugins/ownerreferences"
	"trireme.dev/apiserver/internal/admissionchain/plugins/podnodeselector"
	"trireme.dev/apiserver/internal/admissionchain/plugins/podresizevalidator"
	"trireme.dev/apiserver/internal/admissionchain/plugins/podsecurity"
	"trireme.dev/apiserver/internal/admissionchain/plugins/podtolerationrestriction"
	"trireme.dev/apiserver/internal/admissionchain/plugins/podtopologylabels"
	"trireme.dev/apiserver/internal/admissionchain/plugins/priority"
	"trireme.dev/apiserver/internal/admissionchain/plugins/pvcresize"
	"trireme.dev/apiserver/internal/admissionchain/plugins/resourcequota"
	"trireme.dev/apiserver/internal/admissionchain/plugins/runtimeclass"
	"trireme.dev/apiserver/internal/admissionchain/plugins/serviceaccount"
	"trireme.dev/apiserver/internal/admissionchain/plugins/storageobjectinuseprotection"
)

// registrations add Trireme's plugins to the registry, listed in chain
// order for the reader; the chain's order itself comes from upstreamOrder.
// NamespaceLifecycle, MutatingAdmissionPolicy, MutatingAdmissionWebhook,
// ValidatingAdmissionPolicy and ValidatingAdmissionWebhook are registered
// by k8s.io/apiserver itself.
var registrations = []func(*admission.Plugins){
	alwaysadmit.Register,
	namespaceautoprovision.Register,
	namespaceexists.Register,
	antiaffinity.Register,
	limitranger.Register,
	serviceaccount.Register,
	noderestriction.Register,
	nodetaint.Register,
	alwayspullimages.Register,
	podsecurity.Register,
	podnodeselector.Register,
	priority.Register,
	defaulttolerationseconds.Register,
	podtolerationrestriction.Register,
	eventratelimit.Register,
	extendedresourcetoleration.Register,
	defaultstorageclass.Register,
	storageobjectinuseprotection.Register,
	ownerreferences.Register,
	pvcresize.Register,
	runtimeclass.Register,
	certapproval.Register,
	certsigning.Register,
	ctbattest.Register,
	certsubjectrestriction.Register,
	defaultingressclass.Register,
	denyserviceexternalips.Register,
	podtopologylabels.Register,
	nodedeclaredfeatures.Register,
	podresizevalidator.Register,
	resourcequota.Register,
	alwaysdeny.Register,
}
