package resourcequota

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
)

// ignored are resources quota never counts: reviews are not stored, and
// events and limit ranges would let a quota block the cluster's own
// bookkeeping, as upstream reasons.
var ignored = map[schema.GroupResource]struct{}{
	{Resource: "events"}:                                                                 {},
	{Group: "events.k8s.io", Resource: "events"}:                                         {},
	{Resource: "limitranges"}:                                                            {},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:                           {},
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:                     {},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:                    {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:                {},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}:               {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:                 {},
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}: {},
}

// legacyCounts are the object counts quotas may also name without the
// count/ prefix ("configmaps: 10"), kept for old quotas.
var legacyCounts = []schema.GroupResource{
	corev1.Resource("configmaps"),
	corev1.Resource("resourcequotas"),
	corev1.Resource("replicationcontrollers"),
	corev1.Resource("secrets"),
}

// Evaluators returns the usage evaluators of the resources whose quota is
// more than an object count, plus the legacy count names; lookups go
// through factory's listers, so call it before the factory starts. With a
// nil factory UsageStats counts nothing: admission charges only the
// incoming object against the quota's recorded status.
func Evaluators(factory informers.SharedInformerFactory) []quota.Evaluator {
	// Informers are asked for now, before the factory starts: one first
	// requested after Start would never run.
	list := func(gr schema.GroupResource) generic.ListFuncByNamespace {
		if factory == nil {
			return func(string) ([]runtime.Object, error) { return nil, nil }
		}
		inf, err := factory.ForResource(corev1.SchemeGroupVersion.WithResource(gr.Resource))
		return func(namespace string) ([]runtime.Object, error) {
			if err != nil {
				return nil, err
			}
			return inf.Lister().ByNamespace(namespace).List(everything)
		}
	}
	evals := []quota.Evaluator{
		newPodEvaluator(list(corev1.Resource("pods"))),
		newServiceEvaluator(list(corev1.Resource("services"))),
		newPVCEvaluator(list(corev1.Resource("persistentvolumeclaims"))),
	}
	for _, gr := range legacyCounts {
		evals = append(evals, generic.NewObjectCountEvaluator(gr, list(gr), corev1.ResourceName(gr.Resource)))
	}
	return evals
}

// AdmissionConfiguration is the quota configuration the plugin is
// initialized with. Admission never totals a namespace's usage (the
// resourcequota controller does), so it caches no objects for it.
func AdmissionConfiguration() quota.Configuration {
	return generic.NewConfiguration(Evaluators(nil), ignored)
}
