package apiregistration

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	v1helper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"
	apiregistrationclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/typed/apiregistration/v1"
	apiserviceinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/controllers/autoregister"
)

// crdSyncWorkers is how many CRD group versions are registered at once.
const crdSyncWorkers = 2

// Install keeps APIServices for the group versions delegate serves (with
// the priorities given) and for every CRD's served versions, and adds the
// autoregister-completion readiness check: the server is not ready until
// each built-in group version's APIService has been seen Available, so
// clients never find a built-in group missing from discovery.
func Install(aggregator *aggregatorapiserver.APIAggregator, delegate genericapiserver.DelegationTarget, crds apiextensionsinformers.CustomResourceDefinitionInformer, priorities map[schema.GroupVersion]Priority) error {
	client, err := apiregistrationclient.NewForConfig(aggregator.GenericAPIServer.LoopbackClientConfig)
	if err != nil {
		return fmt.Errorf("apiregistration client: %w", err)
	}
	apiServices := aggregator.APIRegistrationInformers.Apiregistration().V1().APIServices()
	auto := autoregister.NewAutoRegisterController(apiServices, client)
	builtin := builtinAPIServices(delegate.ListedPaths(), priorities)
	for _, s := range builtin {
		auto.AddAPIServiceToSyncOnStart(s)
	}
	crdController := newCRDRegistration(crds, auto)
	// Aggregated discovery orders built-in groups as the legacy one does.
	if m := aggregator.GenericAPIServer.AggregatedDiscoveryGroupManager; m != nil {
		for gv, p := range priorities {
			m.SetGroupVersionPriority(metav1.GroupVersion(gv), int(p.Group), int(p.Version))
		}
	}

	if err := aggregator.GenericAPIServer.AddPostStartHook("trireme-apiservice-autoregistration", func(hc genericapiserver.PostStartHookContext) error {
		go crdController.run(crdSyncWorkers, hc.Done())
		go func() {
			// The CRDs' APIServices must be known before autoregistration's
			// first pass, which deletes automanaged APIServices it does not know.
			if crdController.waitForInitialSync(hc.Done()) {
				auto.Run(5, hc.Done())
			}
		}()
		return nil
	}); err != nil {
		return err
	}
	return aggregator.GenericAPIServer.AddBootSequenceHealthChecks(availableCheck("autoregister-completion", builtin, apiServices))
}

// builtinAPIServices returns the APIServices of the group versions among
// paths ("/api/v1", "/apis/apps/v1") that have a priority.
func builtinAPIServices(paths []string, priorities map[schema.GroupVersion]Priority) []*apiregistrationv1.APIService {
	var out []*apiregistrationv1.APIService
	for _, p := range paths {
		var gv schema.GroupVersion
		switch parts := strings.Split(p, "/"); {
		case p == "/api/v1":
			gv = schema.GroupVersion{Version: "v1"}
		case len(parts) == 4 && parts[1] == "apis":
			gv = schema.GroupVersion{Group: parts[2], Version: parts[3]}
		default:
			continue
		}
		prio, ok := priorities[gv]
		if !ok {
			// Without a priority the APIService could never be told apart
			// from a CRD's and would stay behind when the group goes away.
			continue
		}
		out = append(out, newAPIService(gv, prio))
	}
	return out
}

// newAPIService is a local (Service-less) APIService for gv.
func newAPIService(gv schema.GroupVersion, prio Priority) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group},
		Spec: apiregistrationv1.APIServiceSpec{
			Group:                gv.Group,
			Version:              gv.Version,
			GroupPriorityMinimum: prio.Group,
			VersionPriority:      prio.Version,
		},
	}
}

// availableCheck fails until every one of services has been seen with
// condition Available=True at least once.
func availableCheck(name string, services []*apiregistrationv1.APIService, informer apiserviceinformers.APIServiceInformer) healthz.HealthChecker {
	var mu sync.Mutex
	pending := sets.New[string]()
	for _, s := range services {
		pending.Insert(s.Name)
	}
	seen := func(obj any) {
		s, ok := obj.(*apiregistrationv1.APIService)
		if !ok || !v1helper.IsAPIServiceConditionTrue(s, apiregistrationv1.Available) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		pending.Delete(s.Name)
	}
	// The registration cannot fail on an informer not yet started.
	_, _ = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	})
	return healthz.NamedCheck(name, func(*http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		if pending.Len() > 0 {
			return fmt.Errorf("missing APIServices: %v", sets.List(pending))
		}
		return nil
	})
}
