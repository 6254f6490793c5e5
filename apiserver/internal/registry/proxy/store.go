package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/registry/rest"
)

// methods are the HTTP methods a proxy subresource forwards.
var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// target is where a proxied request goes and how it gets there.
type target struct {
	// URL holds the scheme and host; the request path is appended to its path.
	URL *url.URL
	// Transport carries the request; nil means http.DefaultTransport.
	Transport http.RoundTripper
}

// locator resolves the id of a proxy request (name, name:port or
// scheme:name:port) in the request's namespace to a backend. Its errors are
// API errors, written to the client as a metav1.Status.
type locator func(ctx context.Context, id string) (target, error)

// Store serves one kind's proxy subresource as a rest.Connecter: the generic
// server passes the object's id and the path after /proxy, and Store
// forwards the request to the backend its locator picks.
type Store struct {
	newOptions func() runtime.Object
	locate     locator
}

var _ rest.Connecter = &Store{}
var _ rest.Storage = &Store{}

// New implements rest.Storage; the subresource's kind is its options kind,
// as upstream advertises in discovery.
func (s *Store) New() runtime.Object { return s.newOptions() }

// Destroy implements rest.Storage; Store owns no backend.
func (s *Store) Destroy() {}

// ConnectMethods implements rest.Connecter.
func (s *Store) ConnectMethods() []string { return append([]string(nil), methods...) }

// NewConnectOptions implements rest.Connecter: the path below the
// subresource lands in the options' path field.
func (s *Store) NewConnectOptions() (runtime.Object, bool, string) {
	return s.newOptions(), true, "path"
}

// Connect implements rest.Connecter.
func (s *Store) Connect(ctx context.Context, id string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	subpath, err := optionsPath(opts)
	if err != nil {
		return nil, err
	}
	t, err := s.locate(ctx, id)
	if err != nil {
		return nil, err
	}
	loc := *t.URL
	loc.Path = utilnet.JoinPreservingTrailingSlash(loc.Path, subpath)
	// wrapTransport rewrites links in HTML responses to point back through
	// the apiserver, and turns dial errors into 503 Statuses.
	return proxy.NewUpgradeAwareHandler(&loc, t.Transport, true, false, proxy.NewErrorResponder(responder)), nil
}

// optionsPath returns the path of any of the three proxy options kinds.
func optionsPath(opts runtime.Object) (string, error) {
	switch o := opts.(type) {
	case *corev1.PodProxyOptions:
		return o.Path, nil
	case *corev1.ServiceProxyOptions:
		return o.Path, nil
	case *corev1.NodeProxyOptions:
		return o.Path, nil
	}
	return "", apierrors.NewInternalError(fmt.Errorf("unexpected proxy options %T", opts))
}
