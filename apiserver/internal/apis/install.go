package apis

import (
	"fmt"
	"net/netip"
	"sort"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"trireme.dev/api/scheme"
	"trireme.dev/apiserver/internal/alloc/ipaddress"
	"trireme.dev/apiserver/internal/alloc/portrange"
	"trireme.dev/apiserver/internal/authn"
	"trireme.dev/apiserver/internal/registry"
	"trireme.dev/apiserver/internal/registry/certificates"
	"trireme.dev/apiserver/internal/registry/namespaces"
	"trireme.dev/apiserver/internal/registry/pods"
	"trireme.dev/apiserver/internal/registry/proxy"
	rbacregistry "trireme.dev/apiserver/internal/registry/rbac"
	"trireme.dev/apiserver/internal/registry/services"
)

// Stores are the built stores, keyed by group and resource, for the parts of
// the server that write objects without going through HTTP.
type Stores map[schema.GroupResource]*registry.Store

// Config is what the storage needs beyond etcd.
type Config struct {
	// ServiceCIDRs are the ranges ClusterIPs come from, at most one per IP
	// family; the first is the primary family's.
	ServiceCIDRs []netip.Prefix
	// NodePorts is the range NodePorts come from.
	NodePorts utilnet.PortRange
	// Kubelet is how nodes/proxy reaches kubelets.
	Kubelet proxy.KubeletConfig
	// Authorization is what the RBAC and authorization.k8s.io storage ask.
	Authorization AuthorizationConfig
	// TokenIssuer signs serviceaccounts/token tokens.
	TokenIssuer *authn.TokenIssuer
	// TokenAuthenticator answers TokenReviews.
	TokenAuthenticator authenticator.Request
}

// Built is the storage of every served resource.
type Built struct {
	// ByGroupVersion holds the storage per served group version, keyed by
	// resource path ("pods", "pods/status").
	ByGroupVersion map[schema.GroupVersion]map[string]rest.Storage
	// Stores are the main stores by resource.
	Stores Stores
	// Allocators are the Service IP and port allocators.
	Allocators *services.Allocators
	// Destroy releases the storage backends not owned by a store.
	Destroy func()
}

// Build creates the storage of every served resource.
func Build(opts generic.RESTOptionsGetter, cfg Config) (*Built, error) {
	byGV := map[schema.GroupVersion]map[string]rest.Storage{}
	stores := Stores{}
	// Services come last: their allocators write IPAddress objects.
	for _, res := range append(append(resources(), pods.Resource(), namespaces.Resource()), rbacregistry.Resources()...) {
		if err := add(byGV, stores, res, opts); err != nil {
			return nil, err
		}
	}
	allocators, destroy, err := newAllocators(opts, cfg, stores)
	if err != nil {
		return nil, err
	}
	if err := add(byGV, stores, services.Resource(allocators), opts); err != nil {
		destroy()
		return nil, err
	}
	addSubresources(byGV, stores, cfg)
	if err := addProxySubresources(byGV, stores, cfg.Kubelet); err != nil {
		destroy()
		return nil, err
	}
	addAuthorization(byGV, stores, cfg.Authorization)
	// autoscaling/v1 serves the autoscaling/v2 store: the scheme converts.
	hpa := byGV[autoscalingv2.SchemeGroupVersion]
	byGV[autoscalingv1.SchemeGroupVersion] = map[string]rest.Storage{
		"horizontalpodautoscalers":        hpa["horizontalpodautoscalers"],
		"horizontalpodautoscalers/status": hpa["horizontalpodautoscalers/status"],
	}
	return &Built{ByGroupVersion: byGV, Stores: stores, Allocators: allocators, Destroy: destroy}, nil
}

func newAllocators(opts generic.RESTOptionsGetter, cfg Config, stores Stores) (*services.Allocators, func(), error) {
	var ips []*ipaddress.Allocator
	for _, cidr := range cfg.ServiceCIDRs {
		a, err := ipaddress.New(cidr, stores[networkingv1.Resource("ipaddresses")])
		if err != nil {
			return nil, nil, err
		}
		ips = append(ips, a)
	}
	if len(ips) == 0 {
		return nil, nil, fmt.Errorf("no service CIDR configured")
	}
	ro, err := opts.GetRESTOptions(corev1.Resource("servicenodeportallocations"), &corev1.RangeAllocation{})
	if err != nil {
		return nil, nil, fmt.Errorf("node port allocation storage: %w", err)
	}
	raw, destroy, err := generic.NewRawStorage(ro.StorageConfig, func() runtime.Object { return &corev1.RangeAllocation{} }, nil, "/ranges")
	if err != nil {
		return nil, nil, fmt.Errorf("node port allocation storage: %w", err)
	}
	return &services.Allocators{IPs: ips, Ports: portrange.New(cfg.NodePorts, raw)}, destroy, nil
}

func add(byGV map[schema.GroupVersion]map[string]rest.Storage, stores Stores, res *registry.Resource, opts generic.RESTOptionsGetter) error {

	store, err := registry.NewStore(res, opts)
	if err != nil {
		return err
	}
	stores[res.GroupResource()] = store
	m := byGV[res.GroupVersion]
	if m == nil {
		m = map[string]rest.Storage{}
		byGV[res.GroupVersion] = m
	}
	m[res.Name] = store
	if res.Status {
		m[res.Name+"/status"] = registry.NewStatusStore(store)
	}
	if res.Scale {
		m[res.Name+"/scale"] = registry.NewScaleStore(store)
	}
	return nil
}

func addSubresources(byGV map[schema.GroupVersion]map[string]rest.Storage, stores Stores, cfg Config) {
	core := byGV[corev1.SchemeGroupVersion]
	podStore := stores[corev1.Resource("pods")]
	core["pods/binding"] = pods.NewBindingStore(podStore)
	core["pods/eviction"] = pods.NewEvictionStore(podStore, stores[policyv1.Resource("poddisruptionbudgets")])
	core["pods/ephemeralcontainers"] = pods.NewEphemeralContainersStore(podStore)
	core["pods/resize"] = pods.NewResizeStore(podStore)
	nsStore := stores[corev1.Resource("namespaces")]
	core["namespaces"] = namespaces.NewStore(nsStore)
	core["namespaces/finalize"] = namespaces.NewFinalizeStore(nsStore)
	addAuthentication(byGV, stores, cfg)
	certs := byGV[certificatesv1.SchemeGroupVersion]
	certs["certificatesigningrequests/approval"] = certificates.NewApprovalStore(stores[certificatesv1.Resource("certificatesigningrequests")])
}

// Install adds every served group to s.
func Install(s *genericapiserver.GenericAPIServer, byGV map[schema.GroupVersion]map[string]rest.Storage) error {
	// One APIGroupInfo per group, with every version of it.
	infos := map[string]*genericapiserver.APIGroupInfo{}
	var groups []*genericapiserver.APIGroupInfo
	for gv, storage := range byGV {
		info := infos[gv.Group]
		if info == nil {
			i := genericapiserver.NewDefaultAPIGroupInfo(gv.Group, scheme.Scheme, scheme.ParameterCodec, scheme.Codecs)
			info = &i
			infos[gv.Group] = info
			if gv.Group != "" {
				groups = append(groups, info)
			}
		}
		info.VersionedResourcesStorageMap[gv.Version] = storage
	}
	if core := infos[""]; core != nil {
		if err := s.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, core); err != nil {
			return fmt.Errorf("install core API: %w", err)
		}
	}
	sort.Slice(groups, func(i, j int) bool {
		return groups[i].PrioritizedVersions[0].Group < groups[j].PrioritizedVersions[0].Group
	})
	if err := s.InstallAPIGroups(groups...); err != nil {
		return fmt.Errorf("install API groups: %w", err)
	}
	return nil
}
