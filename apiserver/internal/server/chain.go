package server

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apiextensionsoptions "k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"

	apiopenapi "trireme.dev/api/openapi"
	"trireme.dev/api/scheme"
)

// The server is three generic servers in a delegation chain, as upstream
// composes kube-apiserver: the aggregator (apiregistration.k8s.io, proxying
// to extension apiservers) in front, then the core server (every built-in
// group), then apiextensions-apiserver (CRDs and custom resources), whose
// own delegate answers 404. The three share one Config but for storage,
// post-start hooks and the OpenAPI handler, so they share authentication,
// authorization, admission, flow control and the aggregated discovery.

// openAPIDefinitions are the models of every type any server of the chain
// serves: the built-in groups, CRDs and APIServices.
func openAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := apiopenapi.GetOpenAPIDefinitions(ref)
	for _, more := range []common.GetOpenAPIDefinitions{apiextensionsopenapi.GetOpenAPIDefinitions, aggregatoropenapi.GetOpenAPIDefinitions} {
		for k, v := range more(ref) {
			if _, ok := defs[k]; !ok {
				defs[k] = v
			}
		}
	}
	return defs
}

// setOpenAPI gives config OpenAPI v2 and v3 over every server's types.
func setOpenAPI(config *genericapiserver.Config) {
	namer := openapinamer.NewDefinitionNamer(scheme.NewExternal(), apiextensionsapiserver.Scheme, aggregatorscheme.Scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openAPIDefinitions, namer)
	config.OpenAPIConfig.Info.Title = "Kubernetes"
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openAPIDefinitions, namer)
	config.OpenAPIV3Config.Info.Title = "Kubernetes"
}

// apiExtensionsConfig derives the apiextensions-apiserver's config from the
// core server's (a copy: the core's is not touched).
func (o *Options) apiExtensionsConfig(core genericapiserver.Config, factory informers.SharedInformerFactory, resolver webhook.ServiceResolver) (*apiextensionsapiserver.Config, error) {
	c := core
	c.PostStartHooks = map[string]genericapiserver.PostStartHookConfigEntry{}
	c.RESTOptionsGetter = nil
	etcd := *o.Etcd
	// CRDs are stored as v1beta1 as upstream does: it is the more compact
	// encoding, and clusters moving between servers read the same bytes.
	etcd.StorageConfig.Codec = apiextensionsapiserver.Codecs.LegacyCodec(apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion)
	etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(apiextensionsv1beta1.SchemeGroupVersion, schema.GroupKind{Group: apiextensionsv1beta1.GroupName})
	etcd.SkipHealthEndpoints = true
	if err := etcd.ApplyTo(&c); err != nil {
		return nil, fmt.Errorf("apiextensions storage: %w", err)
	}
	c.MergedResourceConfig = apiextensionsapiserver.DefaultAPIResourceConfigSource()
	return &apiextensionsapiserver.Config{
		GenericConfig: &genericapiserver.RecommendedConfig{Config: c, SharedInformerFactory: factory},
		ExtraConfig: apiextensionsapiserver.ExtraConfig{
			CRDRESTOptionsGetter: apiextensionsoptions.NewCRDRESTOptionsGetter(etcd, c.ResourceTransformers, c.StorageObjectCountTracker),
			MasterCount:          1,
			ServiceResolver:      resolver,
			AuthResolverWrapper:  webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, c.EgressSelector, c.LoopbackClientConfig, c.TracerProvider),
		},
	}, nil
}

// aggregatorConfig derives the aggregator's config from the core server's.
func (o *Options) aggregatorConfig(core genericapiserver.Config, factory informers.SharedInformerFactory, resolver aggregatorapiserver.ServiceResolver) (*aggregatorapiserver.Config, error) {
	c := core
	c.PostStartHooks = map[string]genericapiserver.PostStartHookConfigEntry{}
	c.RESTOptionsGetter = nil
	// The aggregator serves /openapi itself, merged from every server.
	c.SkipOpenAPIInstallation = true
	etcd := *o.Etcd
	etcd.StorageConfig.Codec = aggregatorscheme.Codecs.LegacyCodec(apiregistrationv1.SchemeGroupVersion, apiregistrationv1beta1.SchemeGroupVersion)
	etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(apiregistrationv1.SchemeGroupVersion, schema.GroupKind{Group: apiregistrationv1beta1.GroupName})
	etcd.SkipHealthEndpoints = true
	if err := etcd.ApplyTo(&c); err != nil {
		return nil, fmt.Errorf("apiregistration storage: %w", err)
	}
	c.MergedResourceConfig = aggregatorapiserver.DefaultAPIResourceConfigSource()
	return &aggregatorapiserver.Config{
		GenericConfig: &genericapiserver.RecommendedConfig{Config: c, SharedInformerFactory: factory},
		ExtraConfig: aggregatorapiserver.ExtraConfig{
			ProxyClientCertFile: o.ProxyClientCertFile,
			ProxyClientKeyFile:  o.ProxyClientKeyFile,
			ServiceResolver:     resolver,
		},
	}, nil
}
