// Package serving is the controller-manager's HTTPS endpoint on port
// 10257: /healthz (with one sub-path per check), Prometheus /metrics and,
// with profiling on, /debug/pprof — behind authentication and
// authorization delegated to the apiserver (TokenReview and
// SubjectAccessReview) as upstream's, with the health paths always
// allowed.
package serving

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
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

	"trireme.dev/controller-manager/internal/metrics"
)

// shutdownTimeout bounds how long in-flight requests may finish once the
// context ends.
const shutdownTimeout = 5 * time.Second

// Handler returns the mux: /healthz passes when every check does (ping
// alone when none is given), /metrics serves metrics.Registry.
//
// Start puts authentication and authorization in front of it.
func Handler(checks ...healthz.HealthChecker) http.Handler {
	mux := http.NewServeMux()
	healthz.InstallHandler(mux, append([]healthz.HealthChecker{healthz.PingHealthz}, checks...)...)
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	return mux
}

// WithProfiling adds Go's /debug/pprof handlers to mux (upstream's
// --profiling); mux must be one Handler returned.
func WithProfiling(mux http.Handler) http.Handler {
	m := mux.(*http.ServeMux)
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
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

// Start serves handler over HTTPS as o describes until ctx ends. With no
// certificate given it makes a self-signed one in memory (or in --cert-dir).
// It returns the bound address, or "" when --secure-port is 0.
//
// Requests are authenticated by authn (client certificates, request
// headers, bearer tokens through TokenReview) and authorized by authz
// (always-allowed paths and groups, otherwise SubjectAccessReview); nil
// options for both let everyone in, for tests.
func Start(ctx context.Context, o *apiserveroptions.SecureServingOptions, authn *apiserveroptions.DelegatingAuthenticationOptions, authz *apiserveroptions.DelegatingAuthorizationOptions, handler http.Handler) (string, error) {
	if o.BindPort == 0 && o.Listener == nil {
		return "", nil
	}
	if err := o.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return "", fmt.Errorf("serving certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := o.ApplyTo(&info); err != nil {
		return "", fmt.Errorf("secure serving: %w", err)
	}
	if authn != nil || authz != nil {
		var authnInfo server.AuthenticationInfo
		if err := authn.ApplyTo(&authnInfo, info, nil); err != nil {
			return "", fmt.Errorf("delegated authentication: %w", err)
		}
		var authzInfo server.AuthorizationInfo
		if err := authz.ApplyTo(&authzInfo); err != nil {
			return "", fmt.Errorf("delegated authorization: %w", err)
		}
		handler = withAuth(handler, authnInfo.Authenticator, authzInfo.Authorizer)
	}
	if _, _, err := info.Serve(handler, shutdownTimeout, ctx.Done()); err != nil {
		return "", fmt.Errorf("serve on %s: %w", info.Listener.Addr(), err)
	}
	return info.Listener.Addr().String(), nil
}
