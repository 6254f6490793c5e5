package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	cri "k8s.io/cri-api/pkg/apis"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"trireme.dev/kubelet/internal/certificates"
	"trireme.dev/kubelet/internal/kubelet"
	"trireme.dev/kubelet/internal/metrics"
	"trireme.dev/kubelet/internal/options"
	"trireme.dev/kubelet/internal/server"
)

// startServer serves the node server with its certificate (see
// servingCertificate) and delegated authentication and authorization.
func startServer(ctx context.Context, o *options.Options, client kubernetes.Interface, k *kubelet.Kubelet, rs cri.RuntimeService, ips []net.IP, addresses func() ([]string, []net.IP), log logr.Logger) error {
	cfg := o.Config
	getCert, err := servingCertificate(o, client, ips, addresses, log)
	if err != nil {
		return err
	}
	authnCfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous: &apiserver.AnonymousAuthConfig{Enabled: *cfg.Authentication.Anonymous.Enabled},
		CacheTTL:  cfg.Authentication.Webhook.CacheTTL.Duration,
		// Upstream's kubelet retries TokenReviews with the apiserver's
		// default webhook back-off.
		WebhookRetryBackoff:      apiserveroptions.DefaultAuthWebhookRetryBackoff(),
		TokenAccessReviewTimeout: 10 * time.Second,
	}
	if *cfg.Authentication.Webhook.Enabled {
		authnCfg.TokenAccessReviewClient = client.AuthenticationV1()
	}
	if ca := cfg.Authentication.X509.ClientCAFile; ca != "" {
		p, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", ca)
		if err != nil {
			return fmt.Errorf("client CA: %w", err)
		}
		authnCfg.ClientCertificateCAContentProvider = p
	}
	authn, _, err := authnCfg.New()
	if err != nil {
		return fmt.Errorf("node server authentication: %w", err)
	}
	var authz authorizer.Authorizer
	if cfg.Authorization.Mode == kubeletv1beta1.KubeletAuthorizationModeWebhook {
		authz, err = authorizerfactory.DelegatingAuthorizerConfig{
			SubjectAccessReviewClient: client.AuthorizationV1(),
			AllowCacheTTL:             cfg.Authorization.Webhook.CacheAuthorizedTTL.Duration,
			DenyCacheTTL:              cfg.Authorization.Webhook.CacheUnauthorizedTTL.Duration,
			WebhookRetryBackoff:       apiserveroptions.DefaultAuthWebhookRetryBackoff(),
		}.New()
		if err != nil {
			return fmt.Errorf("node server authorization: %w", err)
		}
	}
	h := server.Handler(server.Config{
		NodeName: o.HostnameOverride, Pods: k, Runtime: rs,
		Authenticator: authn, Authorizer: authz, Registry: metrics.Registry, Log: log, RootDir: o.RootDir, LogDir: systemLogDir(cfg),
		Profiling: *cfg.EnableProfilingHandler,
	})
	addr, err := server.Serve(ctx, net.JoinHostPort(cfg.Address, strconv.Itoa(int(cfg.Port))), getCert, h, log)
	if err != nil {
		return err
	}
	log.Info("Serving the node server", "address", addr.String())
	return nil
}

// servingCertificate returns how the node server finds its certificate:
// with serverTLSBootstrap a manager keeps one signed through
// kubelet-serving CSRs for the Node's addresses as last written (none is served until the first is issued, as
// upstream); otherwise the configured files, or a self-signed pair kept
// in the cert directory as upstream makes.
func servingCertificate(o *options.Options, client kubernetes.Interface, ips []net.IP, addresses func() ([]string, []net.IP), log logr.Logger) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	cfg := o.Config
	if cfg.ServerTLSBootstrap {
		m, err := certificates.NewServingManager(client, o.CertDir, o.HostnameOverride, addresses)
		if err != nil {
			return nil, err
		}
		m.Start()
		log.Info("Serving certificate from kubelet-serving CSRs", "certDir", o.CertDir)
		return func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := m.Current(); c != nil {
				return c, nil
			}
			return nil, errors.New("no serving certificate available for the kubelet")
		}, nil
	}
	certFile, keyFile := cfg.TLSCertFile, cfg.TLSPrivateKeyFile
	if certFile == "" {
		dir := o.CertDir
		certFile, keyFile = filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")
		if _, err := os.Stat(certFile); err != nil {
			cert, key, err := certutil.GenerateSelfSignedCertKey(o.HostnameOverride, ips, nil)
			if err != nil {
				return nil, fmt.Errorf("self-signed serving certificate: %w", err)
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(certFile, cert, 0o644); err != nil {
				return nil, err
			}
			if err := os.WriteFile(keyFile, key, 0o600); err != nil {
				return nil, err
			}
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load serving certificate: %w", err)
	}
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }, nil
}

// systemLogDir is what /logs/ serves: /var/log unless
// enableSystemLogHandler is false.
func systemLogDir(cfg *kubeletv1beta1.KubeletConfiguration) string {
	if cfg.EnableSystemLogHandler != nil && !*cfg.EnableSystemLogHandler {
		return ""
	}
	return "/var/log"
}
