// Package serving is a component's HTTPS endpoint (the controller-manager's
// 10257, the scheduler's 10259): /healthz, /livez and /readyz with one
// sub-path per check, Prometheus /metrics and, with profiling on,
// /debug/pprof — behind authentication and authorization delegated to the
// apiserver (TokenReview and SubjectAccessReview) as upstream's, with the
// health paths always allowed.
package serving

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	goruntime "runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/healthz"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes/scheme"
)

// shutdownTimeout bounds how long in-flight requests may finish once the
// context ends.
const shutdownTimeout = 5 * time.Second

// Options are the secure port's flags, with upstream's names.
type Options struct {
	// SecureServing is where and with which certificate to serve; port 0
	// turns serving off.
	SecureServing *apiserveroptions.SecureServingOptions
	// Authentication and Authorization guard the port, delegated to the
	// apiserver (TokenReview, SubjectAccessReview) as upstream's.
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
}

// NewOptions returns upstream's defaults for a component serving on port,
// its self-signed certificate (when none is given) named pairName.
func NewOptions(port int, pairName string) *Options {
	ss := apiserveroptions.NewSecureServingOptions()
	ss.BindPort = port
	// Self-signed certificates stay in memory unless --cert-dir is given.
	ss.ServerCert.CertDirectory = ""
	ss.ServerCert.PairName = pairName
	// As upstream: without a kubeconfig for them (and outside a cluster)
	// nobody authenticates and only the health paths are allowed.
	authn := apiserveroptions.NewDelegatingAuthenticationOptions()
	authn.TolerateInClusterLookupFailure = true
	authn.RemoteKubeConfigFileOptional = true
	authz := apiserveroptions.NewDelegatingAuthorizationOptions()
	authz.RemoteKubeConfigFileOptional = true
	authz.AlwaysAllowPaths = []string{"/healthz", "/readyz", "/livez"}
	return &Options{SecureServing: ss, Authentication: authn, Authorization: authz}
}

// AddFlags registers the serving, authentication and authorization flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.SecureServing.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
}

// Validate reports every invalid option.
func (o *Options) Validate() []error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	return errs
}

// Endpoints say what Handler serves.
type Endpoints struct {
	// Metrics is what /metrics serves: the component's own registry.
	Metrics prometheus.Gatherer
	// Live are the checks /healthz, /livez and /readyz all need (ping is
	// always one).
	Live []healthz.HealthChecker
	// Ready are the further checks only /readyz needs (caches synced).
	Ready []healthz.HealthChecker
	// Profiling serves Go's profiles at /debug/pprof/ (upstream's
	// --profiling).
	Profiling bool
	// ContentionProfiling records every blocking event for them (upstream's
	// --contention-profiling); it needs Profiling.
	ContentionProfiling bool
}

// Handler returns the mux e describes. Start puts authentication and
// authorization in front of it.
func Handler(e Endpoints) http.Handler {
	mux := http.NewServeMux()
	live := append([]healthz.HealthChecker{healthz.PingHealthz}, e.Live...)
	healthz.InstallHandler(mux, live...)
	healthz.InstallLivezHandler(mux, live...)
	healthz.InstallReadyzHandler(mux, append(live, e.Ready...)...)
	if e.Metrics != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(e.Metrics, promhttp.HandlerOpts{}))
	}
	if e.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		if e.ContentionProfiling {
			// As upstream: every blocking event is recorded.
			goruntime.SetBlockProfileRate(1)
		}
	}
	return mux
}

// Start serves handler over HTTPS as o describes until ctx ends. With no
// certificate given it makes a self-signed one in memory (or in
// --cert-dir). It returns the bound address, or "" when --secure-port is 0.
//
// Requests are authenticated by o.Authentication (client certificates,
// request headers, bearer tokens through TokenReview) and authorized by
// o.Authorization (always-allowed paths and groups, otherwise
// SubjectAccessReview); when both are nil everyone is let in, for tests.
func (o *Options) Start(ctx context.Context, handler http.Handler) (string, error) {
	ss := o.SecureServing
	if ss.BindPort <= 0 && ss.Listener == nil {
		return "", nil
	}
	if err := ss.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return "", fmt.Errorf("serving certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := ss.ApplyTo(&info); err != nil {
		return "", fmt.Errorf("secure serving: %w", err)
	}
	if o.Authentication != nil || o.Authorization != nil {
		var authnInfo server.AuthenticationInfo
		if err := o.Authentication.ApplyTo(&authnInfo, info, nil); err != nil {
			return "", fmt.Errorf("delegated authentication: %w", err)
		}
		var authzInfo server.AuthorizationInfo
		if err := o.Authorization.ApplyTo(&authzInfo); err != nil {
			return "", fmt.Errorf("delegated authorization: %w", err)
		}
		handler = withAuth(handler, authnInfo.Authenticator, authzInfo.Authorizer)
	}
	if _, _, err := info.Serve(handler, shutdownTimeout, ctx.Done()); err != nil {
		return "", fmt.Errorf("serve on %s: %w", info.Listener.Addr(), err)
	}
	return info.Listener.Addr().String(), nil
}

// withAuth wraps handler in upstream's filter chain for component
// endpoints: request info, authentication (401 when it fails),
// authorization (403), panic recovery.
func withAuth(handler http.Handler, authn authenticator.Request, authz authorizer.Authorizer) http.Handler {
	resolver := &apirequest.RequestInfoFactory{}
	if authn == nil {
		// No way to authenticate anyone: everyone is anonymous.
		authn = anonymous.NewAuthenticator(nil)
	}
	handler = genericapifilters.WithAuthorization(handler, authz, scheme.Codecs)
	handler = genericapifilters.WithAuthentication(handler, authn, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	handler = genericapifilters.WithRequestInfo(handler, resolver)
	handler = genericapifilters.WithCacheControl(handler)
	return genericfilters.WithPanicRecovery(handler, resolver)
}
