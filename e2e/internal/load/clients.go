package load

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// restConfig loads the kubeconfig: the only place the driver learns where
// the server is and who to be.
func restConfig(c Config) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.Context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	// Client-side rate limiting would measure the client, not the server.
	cfg.QPS, cfg.Burst = 100000, 100000
	cfg.UserAgent = "apiload"
	cfg.WarningHandler = rest.NoWarnings{}
	if c.Protobuf {
		return protobufConfig(cfg), nil
	}
	return jsonConfig(cfg), nil
}

// jsonConfig is base asking for and sending JSON only. It must be said: a
// typed clientset left without a content type speaks protobuf to built-in
// kinds (gentype prefers it), so "configmaps" measured protobuf
// while custom resources, which have no protobuf, measured JSON.
func jsonConfig(base *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	return cfg
}

// protobufConfig is base asking for and sending protobuf, as controllers'
// clients of built-in kinds do.
func protobufConfig(base *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return cfg
}

// newConnection returns a clientset with a connection of its own. client-go
// shares one transport (one HTTP/2 connection) among configs it can compare;
// a Proxy function makes configs incomparable. When the kubeconfig names no
// proxy, the function keeps requests direct, so $HTTPS_PROXY cannot send
// them anywhere but the kubeconfig's address.
func newConnection(base *rest.Config) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(base)
	if cfg.Proxy == nil {
		cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	return cs, nil
}

// newDynamicConnection is newConnection for a dynamic client.
func newDynamicConnection(base *rest.Config) (dynamic.Interface, error) {
	cfg := rest.CopyConfig(base)
	if cfg.Proxy == nil {
		cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	}
	// Custom resources are served as JSON (or CBOR), never protobuf.
	cfg.ContentType, cfg.AcceptContentTypes = "", ""
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client for %s: %w", cfg.Host, err)
	}
	return dyn, nil
}

// waitReady polls /readyz until it answers 200 or timeout passes.
func waitReady(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Timeout(5 * time.Second).DoRaw(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready after %s: %w", timeout, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// newRESTConnection is newConnection for a bare REST client, JSON only.
func newRESTConnection(base *rest.Config) (rest.Interface, error) {
	cfg := rest.CopyConfig(base)
	if cfg.Proxy == nil {
		cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	}
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	// Only raw bodies are read; the typed kinds decode them themselves.
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	c, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("REST client for %s: %w", cfg.Host, err)
	}
	return c, nil
}
