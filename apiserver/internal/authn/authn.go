// Package authn builds the apiserver's request authenticator from its
// flags: request-header (front proxy), client certificates, static tokens,
// service-account JWTs, bootstrap tokens, OIDC and webhook tokens, and
// anonymous requests as system:anonymous. It also owns the signer the
// TokenRequest subresource issues service-account tokens with.
package authn

import (
	"context"
	"crypto"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/keyutil"

	"trireme.dev/apiserver/internal/authn/satoken"
)

// Result is what the rest of the server needs from authentication.
type Result struct {
	// TokenIssuer signs the tokens of the TokenRequest subresource.
	TokenIssuer *TokenIssuer
	// TokenAuthenticator authenticates bearer tokens alone, for TokenReview.
	TokenAuthenticator authenticator.Request
	// serviceAccountKeys verify service-account tokens; discovery
	// publishes them.
	serviceAccountKeys []crypto.PublicKey
}

// TokenIssuer issues service-account tokens within the server's limits.
type TokenIssuer struct {
	*satoken.Signer
	// APIAudiences are the audiences a TokenRequest gets when it names none.
	APIAudiences []string
	// MaxExpiration caps requested lifetimes; 0 means no cap.
	MaxExpiration time.Duration
}

// ApplyTo sets config's authenticator, asks TLS clients for certificates
// signed by the client (and front-proxy) CA, and returns the token issuer.
// client and factory serve the lookups of bootstrap and service-account
// tokens; factory must be started by the caller.
func (o *Options) ApplyTo(ctx context.Context, config *genericapiserver.Config, client kubernetes.Interface, factory informers.SharedInformerFactory) (*Result, error) {
	if o.ClientCAFile == "" {
		return nil, fmt.Errorf("--client-ca-file is required when a serving certificate is given")
	}
	var requests []authenticator.Request
	header, err := o.requestHeader(config)
	if err != nil {
		return nil, err
	}
	if header != nil {
		requests = append(requests, header)
	}
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", o.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("client CA: %w", err)
	}
	if err := config.Authentication.ApplyClientCert(ca, config.SecureServing); err != nil {
		return nil, fmt.Errorf("client CA: %w", err)
	}
	requests = append(requests, x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion))

	issuer, keys, tokens, err := o.tokenAuthenticators(ctx, config, client, factory)
	if err != nil {
		return nil, err
	}
	tokenAuth := tokenunion.New(tokens...)
	requests = append(requests, bearertoken.New(tokenAuth), websocket.NewProtocolAuthenticator(tokenAuth))

	config.Authentication.APIAudiences = o.apiAudiences()
	// A presented but bad credential fails the request (401) before the
	// anonymous authenticator could let it in as system:anonymous.
	var auth authenticator.Request = group.NewAuthenticatedGroupAdder(union.New(requests...))
	if o.Anonymous {
		auth = union.NewFailOnError(auth, anonymous.NewAuthenticator(nil))
	}
	config.Authentication.Authenticator = auth
	return &Result{
		TokenIssuer:        issuer,
		TokenAuthenticator: group.NewAuthenticatedGroupAdder(bearertoken.New(tokenAuth)),
		serviceAccountKeys: keys,
	}, nil
}

// tokenAuthenticators builds every configured bearer-token authenticator in
// upstream's order, and the service-account token issuer.
func (o *Options) tokenAuthenticators(ctx context.Context, config *genericapiserver.Config, client kubernetes.Interface, factory informers.SharedInformerFactory) (*TokenIssuer, []crypto.PublicKey, []authenticator.Token, error) {
	var tokens []authenticator.Token
	if o.TokenAuthFile != "" {
		t, err := tokenfile.NewCSV(o.TokenAuthFile)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		tokens = append(tokens, t)
	}
	issuer, keys, verifier, err := o.serviceAccountTokens(ctx, client, factory)
	if err != nil {
		return nil, nil, nil, err
	}
	tokens = append(tokens, verifier)
	if o.BootstrapTokens {
		tokens = append(tokens, &BootstrapTokens{
			Secrets: factory.Core().V1().Secrets().Lister().Secrets("kube-system"),
		})
	}
	if o.OIDC.IssuerURL != "" {
		t, err := o.oidc(ctx, config)
		if err != nil {
			return nil, nil, nil, err
		}
		tokens = append(tokens, t)
	}
	if o.WebhookConfigFile != "" {
		t, err := o.webhook()
		if err != nil {
			return nil, nil, nil, err
		}
		// Cache failures too: a misbehaving client must not hammer the webhook.
		tokens = append(tokens, tokencache.New(t, false, o.WebhookCacheTTL, o.WebhookCacheTTL))
	}
	return issuer, keys, tokens, nil
}

// serviceAccountTokens loads the signing and verification keys.
func (o *Options) serviceAccountTokens(ctx context.Context, client kubernetes.Interface, factory informers.SharedInformerFactory) (*TokenIssuer, []crypto.PublicKey, *satoken.Verifier, error) {
	sa := o.ServiceAccounts
	if sa.SigningKeyFile == "" {
		return nil, nil, nil, fmt.Errorf("--service-account-signing-key-file is required")
	}
	key, err := keyutil.PrivateKeyFromFile(sa.SigningKeyFile)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--service-account-signing-key-file: %w", err)
	}
	priv, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, nil, fmt.Errorf("--service-account-signing-key-file: %T cannot sign", key)
	}
	signer, err := satoken.NewSigner(o.issuers()[0], priv)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("service account token signer: %w", err)
	}
	keys := []crypto.PublicKey{priv.Public()}
	for _, f := range sa.KeyFiles {
		pubs, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--service-account-key-file %s: %w", f, err)
		}
		for _, p := range pubs {
			keys = append(keys, p)
		}
	}
	verifier, err := satoken.NewVerifier(o.issuers(), keys, o.apiAudiences(), newLiveObjects(client, factory))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("service account token verifier: %w", err)
	}
	logr.FromContextOrDiscard(ctx).V(2).Info("Service account tokens", "issuer", signer.Issuer(), "verificationKeys", len(keys))
	return &TokenIssuer{Signer: signer, APIAudiences: o.apiAudiences(), MaxExpiration: sa.MaxExpiration}, keys, verifier, nil
}

// requestHeader returns the front-proxy authenticator, or nil when
// --requestheader-client-ca-file is not given.
func (o *Options) requestHeader(config *genericapiserver.Config) (authenticator.Request, error) {
	cfg, err := o.RequestHeader.ToAuthenticationRequestHeaderConfig()
	if err != nil {
		return nil, fmt.Errorf("request header authentication: %w", err)
	}
	if cfg == nil {
		return nil, nil
	}
	if err := config.Authentication.ApplyClientCert(cfg.CAContentProvider, config.SecureServing); err != nil {
		return nil, fmt.Errorf("request header CA: %w", err)
	}
	config.Authentication.RequestHeaderConfig = cfg
	return headerrequest.NewDynamicVerifyOptionsSecure(
		cfg.CAContentProvider.VerifyOptions,
		cfg.AllowedClientNames,
		cfg.UsernameHeaders,
		cfg.UIDHeaders,
		cfg.GroupHeaders,
		cfg.ExtraHeaderPrefixes,
	), nil
}
