package admissionchain

import "k8s.io/apimachinery/pkg/util/sets"

// upstreamOrder is every admission plugin kube-apiserver v1.37 knows, in the
// order it runs them (pkg/kubeapiserver/options/plugins.go). Mutating
// plugins run in this order, then validating ones in this order again; the
// policy, webhook and quota plugins come last so they see the object as the
// built-in plugins left it.
var upstreamOrder = []string{
	"AlwaysAdmit",
	"NamespaceAutoProvision",
	"NamespaceLifecycle",
	"NamespaceExists",
	"LimitPodHardAntiAffinityTopology",
	"LimitRanger",
	"ServiceAccount",
	"NodeRestriction",
	"TaintNodesByCondition",
	"AlwaysPullImages",
	"ImagePolicyWebhook",
	"PodSecurity",
	"PodNodeSelector",
	"Priority",
	"DefaultTolerationSeconds",
	"PodTolerationRestriction",
	"EventRateLimit",
	"ExtendedResourceToleration",
	"DefaultStorageClass",
	"StorageObjectInUseProtection",
	"PodGroupProtection",
	"OwnerReferencesPermissionEnforcement",
	"PersistentVolumeClaimResize",
	"RuntimeClass",
	"CertificateApproval",
	"CertificateSigning",
	"ClusterTrustBundleAttest",
	"CertificateSubjectRestriction",
	"DefaultIngressClass",
	"DenyServiceExternalIPs",
	"PodTopologyLabels",
	"PodGroupWorkloadExists",
	"NodeDeclaredFeatureValidator",
	"JobValidation",
	"PodResizeValidator",
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"AlwaysDeny",
}

// upstreamDefaultOn are the plugins kube-apiserver enables when no flag
// says otherwise.
var upstreamDefaultOn = sets.New(
	"NamespaceLifecycle",
	"LimitRanger",
	"ServiceAccount",
	"DefaultStorageClass",
	"PersistentVolumeClaimResize",
	"DefaultTolerationSeconds",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"StorageObjectInUseProtection",
	"PodGroupProtection",
	"Priority",
	"TaintNodesByCondition",
	"RuntimeClass",
	"CertificateApproval",
	"CertificateSigning",
	"ClusterTrustBundleAttest",
	"CertificateSubjectRestriction",
	"DefaultIngressClass",
	"PodSecurity",
	"PodTopologyLabels",
	"MutatingAdmissionPolicy",
	"ValidatingAdmissionPolicy",
	"PodGroupWorkloadExists",
	"NodeDeclaredFeatureValidator",
	"JobValidation",
	"PodResizeValidator",
)

// order returns the registered plugins in upstream's order and those of
// them that are off unless enabled.
func order(registered []string) (ordered []string, defaultOff sets.Set[string]) {
	have := sets.New(registered...)
	defaultOff = sets.New[string]()
	for _, name := range upstreamOrder {
		if !have.Has(name) {
			continue
		}
		ordered = append(ordered, name)
		if !upstreamDefaultOn.Has(name) {
			defaultOff.Insert(name)
		}
	}
	return ordered, defaultOff
}
