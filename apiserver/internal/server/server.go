package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
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
	"trireme.dev/apiserver/internal/authn"
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
	b := &build{o: o, log: logr.FromContextOrDiscard(ctx)}
	if errs := o.Validate(); len(errs) > 0 {
		return nil, b.cleanup, fmt.Errorf("invalid options: %v", errs)
	}
	b.cidrs, b.nodePorts, _ = o.serviceRanges()
	if err := b.startEtcd(ctx, zl); err != nil {
		return nil, b.cleanup, err
	}
	if err := b.newConfig(); err != nil {
		return nil, b.cleanup, err
	}
	if err := b.applyOptions(ctx); err != nil {
		return nil, b.cleanup, err
	}
	if err := b.newServers(); err != nil {
		return nil, b.cleanup, err
	}
	if err := b.installAPIs(); err != nil {
		return nil, b.cleanup, err
	}
	if err := b.addPostStartHooks(); err != nil {
		return nil, b.cleanup, err
	}
	agg, err := b.newAggregator()
	if err != nil {
		return nil, b.cleanup, err
	}
	return &Server{aggregator: agg}, b.cleanup, nil
}

// build is one call of New: what its steps make, in the order New calls
// them, for the steps after.
type build struct {
	o   *Options
	log logr.Logger
	// cleanups stop what the steps started, in reverse order.
	cleanups []func()

	cidrs     []netip.Prefix
	nodePorts utilnet.PortRange
	advertise net.IP

	// config is the core server's, from which the other two servers' are
	// copied; client and factory reach the server through its loopback.
	config        *genericapiserver.Config
	client        kubernetes.Interface
	factory       informers.SharedInformerFactory
	authn         *authn.Result
	authorization *authz.Built

	// resolver finds where webhooks and extension servers behind a
	// Service are reached.
	resolver aggregatorapiserver.ServiceResolver
	// aggConfig waits for the aggregator, which is made last.
	aggConfig *aggregatorapiserver.Config
	extServer *apiextensionsapiserver.CustomResourceDefinitions
	core      *genericapiserver.GenericAPIServer
	built     *apis.Built
}

// cleanup stops what the steps so far started, last first.
func (b *build) cleanup() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
}

// startEtcd starts the embedded etcd when no etcd servers are given, and
// points the storage options at it.
func (b *build) startEtcd(ctx context.Context, zl *zap.Logger) error {
	o := b.o
	if len(o.Etcd.StorageConfig.Transport.ServerList) != 0 {
		return nil
	}
	start := time.Now()
	e, err := etcd.Start(ctx, o.etcdDir(), zl)
	if err != nil {
		return err
	}
	b.cleanups = append(b.cleanups, e.Stop)
	o.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	b.log.Info("Started embedded etcd", "dir", o.etcdDir(), "took", time.Since(start))
	return nil
}

// newConfig makes the core server's config with its serving settings (the
// dev-mode certificates first, if it needs them), and the loopback client
// and informers the later steps use.
func (b *build) newConfig() error {
	o := b.o
	var err error
	if b.advertise, err = o.advertiseAddress(); err != nil {
		return err
	}
	if err := o.ensureDevCerts(b.advertise); err != nil {
		return err
	}
	config := genericapiserver.NewConfig(scheme.Codecs)
	if err := o.ServerRun.ApplyTo(config); err != nil {
		return fmt.Errorf("serving options: %w", err)
	}
	// After ServerRun, which would set the library's own build version and
	// the unresolved advertise address.
	config.EffectiveVersion = compatibility.NewEffectiveVersionFromString(binaryVersion, "", "")
	config.PublicAddress = b.advertise
	config.LongRunningFunc = genericfilters.BasicLongRunningRequestCheck(
		sets.NewString("watch", "proxy"),
		sets.NewString("attach", "exec", "proxy", "log", "portforward"),
	)
	if err := o.SecureServing.ApplyTo(&config.SecureServing, &config.LoopbackClientConfig); err != nil {
		return fmt.Errorf("secure serving: %w", err)
	}
	// The server's own writes (Endpoints for the kubernetes Service) would
	// otherwise log the deprecation warnings meant for users.
	loopback := rest.CopyConfig(config.LoopbackClientConfig)
	loopback.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return fmt.Errorf("loopback client: %w", err)
	}
	b.config, b.client = config, client
	b.factory = informers.NewSharedInformerFactory(client, 10*time.Minute)
	return nil
}

// applyOptions applies authentication, OpenAPI, storage, audit, features,
// authorization and admission to the core config, in that order: the
// later ones use what the earlier ones set (the authorizer, the storage).
func (b *build) applyOptions(ctx context.Context) error {
	o, config := b.o, b.config
	if err := o.Authentication.EnsureServiceAccountKey(filepath.Join(o.DataDir, "pki")); err != nil {
		return err
	}
	var err error
	if b.authn, err = o.Authentication.ApplyTo(ctx, config, b.client, b.factory); err != nil {
		return err
	}
	setOpenAPI(config)
	// One aggregated discovery for the chain: each server adds its groups.
	config.AggregatedDiscoveryGroupManager = aggregated.NewResourceManager("apis")

	storageFactory, err := newStorageFactory(o)
	if err != nil {
		return err
	}
	if err := o.Etcd.ApplyWithStorageFactoryTo(storageFactory, config); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	if err := o.Audit.ApplyTo(config); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := o.Features.ApplyTo(config, b.client, b.factory); err != nil {
		return fmt.Errorf("features: %w", err)
	}
	if b.authorization, err = o.Authorization.ApplyTo(config, b.factory); err != nil {
		return err
	}
	// Admission webhooks reach their Services as the aggregator and CRD
	// conversion do, never through the host's DNS.
	if b.resolver, err = o.serviceResolver(b.factory); err != nil {
		return err
	}
	return o.Admission.ApplyTo(config, b.client, b.factory, b.resolver)
}

// newServers makes the apiextensions server and the core server in front
// of it, and the aggregator's config. The other two servers' configs are
// copied from the core's before Complete fills it in.
func (b *build) newServers() error {
	o, config := b.o, b.config
	extConfig, err := o.apiExtensionsConfig(*config, b.factory, b.resolver)
	if err != nil {
		return err
	}
	if b.aggConfig, err = o.aggregatorConfig(*config, b.factory, b.resolver); err != nil {
		return err
	}
	notFound := notfoundhandler.New(config.Serializer, genericapifilters.NoMuxAndDiscoveryIncompleteKey)
	if b.extServer, err = extConfig.Complete().New(genericapiserver.NewEmptyDelegateWithCustomHandler(notFound)); err != nil {
		return fmt.Errorf("create apiextensions server: %w", err)
	}
	if b.core, err = config.Complete(b.factory).New("trireme-apiserver", b.extServer.GenericAPIServer); err != nil {
		return fmt.Errorf("create server: %w", err)
	}
	return nil
}

// installAPIs builds the storage of every built-in group, installs it in
// the core server, and starts the informers once the server runs.
func (b *build) installAPIs() error {
	config := b.config
	built, err := apis.Build(config.RESTOptionsGetter, apis.Config{
		ServiceCIDRs:       b.cidrs,
		NodePorts:          b.nodePorts,
		Kubelet:            b.o.Kubelet,
		Authorization:      apis.AuthorizationConfig{Authorizer: config.Authorization.Authorizer, RuleResolver: config.RuleResolver, RBACRules: b.authorization.RBAC},
		TokenIssuer:        b.authn.TokenIssuer,
		TokenAuthenticator: b.authn.TokenAuthenticator,
	})
	if err != nil {
		return err
	}
	b.built = built
	b.cleanups = append(b.cleanups, built.Destroy)
	if err := apis.Install(b.core, built.ByGroupVersion); err != nil {
		return err
	}
	b.o.Authentication.InstallDiscovery(b.core, b.authn, b.log)
	b.core.AddPostStartHookOrDie("start-informers", func(hc genericapiserver.PostStartHookContext) error {
		b.factory.Start(hc.Done())
		return nil
	})
	return nil
}

// addPostStartHooks adds the core server's start-up work: returning
// start-up's memory, the bootstrap objects (kubernetes Service, priority
// classes, ...), the RBAC policy and authentication's hooks.
func (b *build) addPostStartHooks() error {
	config := b.config
	_, port, err := config.SecureServing.HostPort()
	if err != nil {
		return err
	}
	boot := &bootstrap.Bootstrap{
		Client:        b.client,
		Stores:        b.built.Stores,
		Allocators:    b.built.Allocators,
		ServiceCIDRs:  b.cidrs,
		AdvertiseIP:   b.advertise,
		AdvertisePort: port,
		ServerID:      config.APIServerID,
	}
	b.core.AddPostStartHookOrDie("trireme-release-startup-memory", b.releaseStartupMemory)
	if err := boot.AddHooks(b.core); err != nil {
		return err
	}
	if err := authz.AddPolicyHook(b.core, b.client, b.authorization.RBAC); err != nil {
		return err
	}
	return b.o.Authentication.AddPostStartHooks(b.core, b.client)
}

// releaseStartupMemory is a post-start hook. Building the served groups
// and their OpenAPI leaves much garbage; give it back once start-up is
// over rather than when the collector next runs, then free heap (and
// start-up's pages of the executable) whenever the server is idle; see
// package memtrim. From then on the collector's target follows the live
// heap; see package gcgoal.
func (b *build) releaseStartupMemory(hc genericapiserver.PostStartHookContext) error {
	o, log := b.o, b.log
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
}

// newAggregator puts the aggregator in front of the core server. It comes
// last: it registers an APIService for every group version the servers
// behind it list.
func (b *build) newAggregator() (*aggregatorapiserver.APIAggregator, error) {
	agg, err := b.aggConfig.Complete().NewWithDelegate(b.core)
	if err != nil {
		return nil, fmt.Errorf("create aggregator: %w", err)
	}
	crds := b.extServer.Informers.Apiextensions().V1().CustomResourceDefinitions()
	if err := apiregistration.Install(agg, b.core, crds, apiregistration.BuiltinPriorities()); err != nil {
		return nil, err
	}
	return agg, nil
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
