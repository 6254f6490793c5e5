package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// crdsPerGroup is how many of the discovery phase's CRDs share a group, as
// operators install several kinds in one group.
const crdsPerGroup = 10

// discoveryParallel is how many CRDs the phase creates at once.
const discoveryParallel = 10

// DiscoveryResult is the latency of full discovery, as kubectl does it
// without a cache, with DiscoveryCRDs CRDs installed.
type DiscoveryResult struct {
	CRDs       int
	Setup      time.Duration // creating the CRDs until all are in discovery
	Aggregated Summary       // /api and /apis as APIGroupDiscoveryLists (two requests)
	Legacy     Summary       // /api, /apis and every group version's resource list
	Resources  int           // resources the aggregated discovery listed
}

// discoveryCRD is the i-th CRD of the discovery phase.
func discoveryCRD(run string, i int) *apiextensionsv1.CustomResourceDefinition {
	group := fmt.Sprintf("g%d%s", i/crdsPerGroup, discoveryGroupSuffix)
	plural := fmt.Sprintf("kind%ds", i)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, Labels: map[string]string{runLabel: run}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: fmt.Sprintf("Kind%d", i), ShortNames: []string{fmt.Sprintf("k%d", i)}, Categories: []string{"apiload"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: ptrTrue()},
						"status": {Type: "object", XPreserveUnknownFields: ptrTrue()},
					},
				}},
			}},
		},
	}
}

func ptrTrue() *bool { b := true; return &b }

// runDiscovery installs cfg.DiscoveryCRDs CRDs, waits until discovery lists
// them all, then times full discovery both ways. The CRDs are deleted by
// cleanup.
func (r *runner) runDiscovery(ctx context.Context, base *rest.Config) (DiscoveryResult, error) {
	res := DiscoveryResult{CRDs: r.cfg.DiscoveryCRDs}
	crds, err := apiextensionsclient.NewForConfig(base)
	if err != nil {
		return res, err
	}
	start := time.Now()
	sem := make(chan struct{}, discoveryParallel)
	errs := make([]error, res.CRDs)
	var wg sync.WaitGroup
	for i := range res.CRDs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, errs[i] = ensureCRD(ctx, crds, discoveryCRD(r.run, i))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	aggregated, err := discovery.NewDiscoveryClientForConfig(base)
	if err != nil {
		return res, err
	}
	legacy, err := discovery.NewDiscoveryClientForConfig(base)
	if err != nil {
		return res, err
	}
	legacy.UseLegacyDiscovery = true
	// Discovery follows CRDs a moment later; measure the settled state.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, err := countDiscoveryResources(aggregated)
		if err == nil && n >= res.CRDs {
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("discovery lists %d of %d CRDs after 2m (%v)", n, res.CRDs, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	res.Setup = time.Since(start)
	measure := func(dc *discovery.DiscoveryClient) Summary {
		var s Samples
		t0 := time.Now()
		for range r.cfg.DiscoveryRuns {
			begin := time.Now()
			if _, _, err := dc.ServerGroupsAndResources(); err != nil {
				s.Fail(err)
				continue
			}
			s.Observe(time.Since(begin))
		}
		return s.Summarize(time.Since(t0))
	}
	res.Aggregated = measure(aggregated)
	res.Legacy = measure(legacy)
	res.Resources, _ = countDiscoveryResources(aggregated)
	return res, ctx.Err()
}

// discoveryGroupSuffix ends the groups of the discovery phase's CRDs.
const discoveryGroupSuffix = ".discovery.apiload.trireme.dev"

// countDiscoveryResources counts the resources of the discovery phase's
// groups that dc finds.
func countDiscoveryResources(dc *discovery.DiscoveryClient) (int, error) {
	_, lists, err := dc.ServerGroupsAndResources()
	n := 0
	for _, l := range lists {
		if group, _, _ := strings.Cut(l.GroupVersion, "/"); !strings.HasSuffix(group, discoveryGroupSuffix) {
			continue
		}
		for _, res := range l.APIResources {
			if !strings.Contains(res.Name, "/") {
				n++
			}
		}
	}
	return n, err
}
