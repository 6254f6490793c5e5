package server

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/util/notfoundhandler"
	proxyutil "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"

	"trireme.dev/api/scheme"
	"trireme.dev/apiserver/internal/apiregistration"
	"trireme.dev/apiserver/internal/apis"
	"trireme.dev/apiserver/internal/authz"
	"trireme.dev/apiserver/internal/bootstrap"
	"trireme.dev/apiserver/internal/devpki"
	"trireme.dev/apiserver/internal/etcd"
	"trireme.dev/apiserver/internal/gcgoal"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/memtrim"
)

// binaryVersion is the Kubernetes minor version whose API Trireme serves.
const binaryVersion = "1.37"

// Run starts the apiserver and serves until ctx ends.
func Run(ctx context.Context, o *Options) error {
	zl, err := logging.Zap(o.LogFormat, o.Verbosity)
	if err != nil {
		return err
	}
	defer func() { _ = zl.Sync() }()
	log := logging.FromZap(zl)
	ctx = logr.NewContext(ctx, log)
	srv, cleanup, err := New(ctx, o, zl)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// New builds the server. The cleanup func stops what New started (embedded
// etcd, storage) and is non-nil even on error.
func New(ctx context.Context, o *Options, zl *zap.Logger) (*Server, func(), error) {
	log := logr.FromContextOrDiscard(ctx)
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	if errs := o.Validate(); len(errs) > 0 {
		return nil, cleanup, fmt.Errorf("invalid options: %v", errs)
	}
	cidrs, nodePorts, _ := o.serviceRanges()

	if len(o.Etcd.StorageConfig.Transport.ServerList) == 0 {
		start := time.Now()
		e, err := etcd.Start(ctx, o.etcdDir(), zl)
		if err != nil {
			return nil, cleanup, err
		}
		cleanups = append(cleanups, e.Stop)
		o.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
		log.Info("Started embedded etcd", "dir", o.etcdDir(), "took", time.Since(start))
	}

	advertise, err := o.advertiseAddress()
	if err != nil {
		return nil, cleanup, err
	}
	if err := o.ensureDevCerts(advertise); err != nil {
		return nil, cleanup, err
	}

	config := genericapiserver.NewConfig(scheme.Codecs)
	if err := o.ServerRun.ApplyTo(config); err != nil {
		return nil, cleanup, fmt.Errorf("serving options: %w", err)
	}
	// After ServerRun, which would set the library's own build version and
	// the unresolved advertise address.
	config.EffectiveVersion = compatibility.NewEffectiveVersionFromString(binaryVersion, "", "")
	config.PublicAddress = advertise
	config.LongRunningFunc = genericfilters.BasicLongRunningRequestCheck(
		sets.NewString("watch", "proxy"),
		sets.NewString("attach", "exec", "proxy", "log", "portforward"),
	)
	if err := o.SecureServing.ApplyTo(&config.SecureServing, &config.LoopbackClientConfig); err != nil {
		return nil, cleanup, fmt.Errorf("secure serving: %w", err)
	}
	// The server's own writes (Endpoints for the kubernetes Service) would
	// otherwise log the deprecation warnings meant for users.
	loopback := rest.CopyConfig(config.LoopbackClientConfig)
	loopback.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return nil, cleanup, fmt.Errorf("loopback client: %w", err)
	}
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	if err := o.Authentication.EnsureServiceAccountKey(filepath.Join(o.DataDir, "pki")); err != nil {
		return nil, cleanup, err
	}
	authnResult, err := o.Authentication.ApplyTo(ctx, config, client, factory)
	if err != nil {
		return nil, cleanup, err
	}
	setOpenAPI(config)
	// One aggregated discovery for the chain: each server adds its groups.
	config.AggregatedDiscoveryGroupManager = aggregated.NewResourceManager("apis")

	storageFactory, err := newStorageFactory(o)
	if err != nil {
		return nil, cleanup, err
	}
	if err := o.Etcd.ApplyWithStorageFactoryTo(storageFactory, config); err != nil {
		return nil, cleanup, fmt.Errorf("etcd: %w", err)
	}
	if err := o.Audit.ApplyTo(config); err != nil {
		return nil, cleanup, fmt.Errorf("audit: %w", err)
	}

	if err := o.Features.ApplyTo(config, client, factory); err != nil {
		return nil, cleanup, fmt.Errorf("features: %w", err)
	}
	authorization, err := o.Authorization.ApplyTo(config, factory)
	if err != nil {
		return nil, cleanup, err
	}
	if err := o.Admission.ApplyTo(config, client, factory); err != nil {
		return nil, cleanup, err
	}

	resolver, err := o.serviceResolver(factory)
	if err != nil {
		return nil, cleanup, err
	}
	extConfig, err := o.apiExtensionsConfig(*config, factory, resolver)
	if err != nil {
		return nil, cleanup, err
	}
	aggConfig, err := o.aggregatorConfig(*config, factory, resolver)
	if err != nil {
		return nil, cleanup, err
	}
	notFound := notfoundhandler.New(config.Serializer, genericapifilters.NoMuxAndDiscoveryIncompleteKey)
	extServer, err := extConfig.Complete().New(genericapiserver.NewEmptyDelegateWithCustomHandler(notFound))
	if err != nil {
		return nil, cleanup, fmt.Errorf("create apiextensions server: %w", err)
	}
	srv, err := config.Complete(factory).New("trireme-apiserver", extServer.GenericAPIServer)
	if err != nil {
		return nil, cleanup, fmt.Errorf("create server: %w", err)
	}
	built, err := apis.Build(config.RESTOptionsGetter, apis.Config{
		ServiceCIDRs:       cidrs,
		NodePorts:          nodePorts,
		Kubelet:            o.Kubelet,
		Authorization:      apis.AuthorizationConfig{Authorizer: config.Authorization.Authorizer, RuleResolver: config.RuleResolver, RBACRules: authorization.RBAC},
		TokenIssuer:        authnResult.TokenIssuer,
		TokenAuthenticator: authnResult.TokenAuthenticator,
	})
	if err != nil {
		return nil, cleanup, err
	}
	cleanups = append(cleanups, built.Destroy)
	if err := apis.Install(srv, built.ByGroupVersion); err != nil {
		return nil, cleanup, err
	}
	srv.AddPostStartHookOrDie("start-informers", func(hc genericapiserver.PostStartHookContext) error {
		factory.Start(hc.Done())
		return nil
	})
	_, port, err := config.SecureServing.HostPort()
	if err != nil {
		return nil, cleanup, err
	}
	boot := &bootstrap.Bootstrap{
		Client:        client,
		Stores:        built.Stores,
		Allocators:    built.Allocators,
		ServiceCIDRs:  cidrs,
		AdvertiseIP:   advertise,
		AdvertisePort: port,
		ServerID:      config.APIServerID,
	}
	srv.AddPostStartHookOrDie("trireme-release-startup-memory", func(hc genericapiserver.PostStartHookContext) error {
		// Building the served groups and their OpenAPI leaves much garbage;
		// give it back once start-up is over rather than when the collector
		// next runs, then free heap (and start-up's pages of the
		// executable) whenever the server is idle; see package memtrim.
		// From then on the collector's target follows the live heap; see
		// package gcgoal.
		go func() {
			select {
			case <-hc.Done():
				return
			case <-time.After(10 * time.Second):
				if o.GCPercentAfterStartup > 0 {
					go gcgoal.Bound(hc, log, gcgoal.Headroom, o.GCPercentAfterStartup, gcgoal.Interval)
				}
				debug.FreeOSMemory()
			}
			memtrim.RunIdleTrimmer(hc, log, memtrim.IdleInterval, memtrim.IdleAllocations)
		}()
		return nil
	})
	if err := boot.AddHooks(srv); err != nil {
		return nil, cleanup, err
	}
	if err := authz.AddPolicyHook(srv, client, authorization.RBAC); err != nil {
		return nil, cleanup, err
	}
	if err := o.Authentication.AddPostStartHooks(srv, client); err != nil {
		return nil, cleanup, err
	}
	// The aggregator comes last: it registers an APIService for every
	// group version the servers behind it list.
	agg, err := aggConfig.Complete().NewWithDelegate(srv)
	if err != nil {
		return nil, cleanup, fmt.Errorf("create aggregator: %w", err)
	}
	crds := extServer.Informers.Apiextensions().V1().CustomResourceDefinitions()
	if err := apiregistration.Install(agg, srv, crds, apiregistration.BuiltinPriorities()); err != nil {
		return nil, cleanup, err
	}
	return &Server{aggregator: agg}, cleanup, nil
}

// Server is the assembled chain of servers.
type Server struct {
	aggregator *aggregatorapiserver.APIAggregator
}

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	prepared, err := s.aggregator.PrepareRun()
	if err != nil {
		return fmt.Errorf("prepare server: %w", err)
	}
	return prepared.Run(ctx)
}

// serviceResolver finds where the aggregator and CRD conversion webhooks
// reach a Service: one of its endpoints, or its ClusterIP.
func (o *Options) serviceResolver(factory informers.SharedInformerFactory) (aggregatorapiserver.ServiceResolver, error) {
	services := factory.Core().V1().Services().Lister()
	if !o.EnableAggregatorRouting {
		return aggregatorapiserver.NewClusterIPServiceResolver(services), nil
	}
	slices, err := proxyutil.NewEndpointSliceIndexerGetter(factory.Discovery().V1().EndpointSlices())
	if err != nil {
		return nil, fmt.Errorf("endpoint slice index: %w", err)
	}
	return aggregatorapiserver.NewEndpointServiceResolver(services, slices), nil
}

// advertiseAddress picks the IP the kubernetes Service points at.
func (o *Options) advertiseAddress() (net.IP, error) {
	if a := o.ServerRun.AdvertiseAddress; a != nil && !a.IsUnspecified() {
		return a, nil
	}
	// As upstream, a loopback bind address is not advertised: endpoints may
	// not be loopback addresses, so the host's default-route address is.
	if ip := o.SecureServing.BindAddress; ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		return ip, nil
	}
	ip, err := utilnet.ResolveBindAddress(net.IPv4zero)
	if err != nil {
		// A machine without a default route still serves itself.
		return net.IPv4(127, 0, 0, 1), nil
	}
	return ip, nil
}

// ensureDevCerts makes the dev-mode CA, serving certificate and admin
// kubeconfig when no serving certificate is configured.
func (o *Options) ensureDevCerts(advertise net.IP) error {
	sc := &o.SecureServing.ServerCert.CertKey
	if sc.CertFile != "" || o.SecureServing.ServerCert.GeneratedCert != nil {
		return nil
	}
	files := devpki.Layout(o.DataDir)
	hosts := []string{"localhost", "127.0.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", advertise.String()}
	if ip := o.SecureServing.BindAddress; ip != nil && !ip.IsUnspecified() {
		hosts = append(hosts, ip.String())
	}
	if cidrs, _, err := o.serviceRanges(); err == nil {
		hosts = append(hosts, cidrs[0].Masked().Addr().Next().String())
	}
	serverHost := "127.0.0.1"
	if ip := o.SecureServing.BindAddress; ip != nil && !ip.IsUnspecified() {
		serverHost = ip.String()
	}
	server := "https://" + net.JoinHostPort(serverHost, strconv.Itoa(o.SecureServing.BindPort))
	if err := devpki.Ensure(files, devpki.Options{Hosts: hosts, Server: server}); err != nil {
		return fmt.Errorf("dev-mode certificates: %w", err)
	}
	sc.CertFile, sc.KeyFile = files.ServingCert, files.ServingKey
	if o.Authentication.ClientCAFile == "" {
		o.Authentication.ClientCAFile = files.CACert
	}
	// The aggregator's identity towards extension apiservers, with
	// kubeadm's request-header settings.
	if rh := o.Authentication.RequestHeader; rh.ClientCAFile == "" {
		rh.ClientCAFile = files.FrontProxyCACert
		rh.AllowedNames = []string{devpki.FrontProxyClientName}
		rh.UsernameHeaders = []string{"X-Remote-User"}
		rh.GroupHeaders = []string{"X-Remote-Group"}
		rh.ExtraHeaderPrefixes = []string{"X-Remote-Extra-"}
	}
	if o.ProxyClientCertFile == "" {
		o.ProxyClientCertFile, o.ProxyClientKeyFile = files.FrontProxyClientCert, files.FrontProxyClientKey
	}
	return nil
}

// specialPrefixes are the etcd paths upstream keeps for historic reasons;
// etcd tooling and migrations expect them.
var specialPrefixes = map[schema.GroupResource]string{
	{Resource: "replicationcontrollers"}:                "controllers",
	{Resource: "endpoints"}:                             "services/endpoints",
	{Resource: "nodes"}:                                 "minions",
	{Resource: "services"}:                              "services/specs",
	{Group: "networking.k8s.io", Resource: "ingresses"}: "ingress",
}

func newStorageFactory(o *Options) (*serverstorage.DefaultStorageFactory, error) {
	encoding := serverstorage.NewDefaultResourceEncodingConfig(scheme.Scheme)
	resourceConfig := serverstorage.NewResourceConfig()
	for _, g := range scheme.Groups {
		resourceConfig.EnableVersions(g.Version)
	}
	f := serverstorage.NewDefaultStorageFactory(
		o.Etcd.StorageConfig,
		o.Etcd.DefaultStorageMediaType,
		scheme.Codecs,
		encoding,
		resourceConfig,
		specialPrefixes,
	)
	// Both Event APIs read and write one store.
	f.AddCohabitatingResources(corev1.Resource("events"), schema.GroupResource{Group: "events.k8s.io", Resource: "events"})
	return f, nil
}
