package authn

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/server/options"
)

// DefaultServiceAccountIssuer is the iss of service-account tokens when
// --service-account-issuer is not given: the in-cluster name of the API.
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// Options are the authentication flags.
type Options struct {
	// ClientCAFile verifies client certificates; CN is the user, O the groups.
	ClientCAFile string
	// Anonymous lets requests without credentials in as system:anonymous.
	Anonymous bool
	// TokenAuthFile is a CSV of static bearer tokens: token,user,uid,"g1,g2".
	TokenAuthFile string
	// BootstrapTokens enables bootstrap-token Secrets in kube-system.
	BootstrapTokens bool
	// ServiceAccounts configure issuing and verifying service-account JWTs.
	ServiceAccounts ServiceAccountOptions
	// OIDC configures an OpenID Connect issuer's ID tokens.
	OIDC OIDCOptions
	// WebhookConfigFile is a kubeconfig naming a TokenReview webhook.
	WebhookConfigFile string
	// WebhookCacheTTL is how long webhook answers are cached.
	WebhookCacheTTL time.Duration
	// RequestHeader configures front-proxy authentication.
	RequestHeader *options.RequestHeaderAuthenticationOptions
}

// ServiceAccountOptions configure service-account tokens.
type ServiceAccountOptions struct {
	// SigningKeyFile holds the private key tokens are signed with.
	SigningKeyFile string
	// KeyFiles hold public (or private) keys tokens are verified with;
	// the signing key's public half is always among them.
	KeyFiles []string
	// Issuers are accepted iss values; the first one is used for new tokens.
	Issuers []string
	// APIAudiences are the audiences the API itself accepts; they default
	// to the first issuer.
	APIAudiences []string
	// MaxExpiration caps a TokenRequest's expirationSeconds (0: no cap).
	MaxExpiration time.Duration
	// JWKSURI is the jwks_uri the issuer's discovery document gives; empty
	// means this server's own /openid/v1/jwks at its external address.
	JWKSURI string
}

// OIDCOptions are upstream's --oidc-* flags.
type OIDCOptions struct {
	IssuerURL      string
	ClientID       string
	CAFile         string
	UsernameClaim  string
	UsernamePrefix string
	GroupsClaim    string
	GroupsPrefix   string
	SigningAlgs    []string
	RequiredClaims map[string]string
}

// NewOptions returns upstream's defaults.
func NewOptions() *Options {
	return &Options{
		Anonymous:       true,
		WebhookCacheTTL: 2 * time.Minute,
		OIDC:            OIDCOptions{UsernameClaim: "sub", SigningAlgs: []string{"RS256"}},
		RequestHeader:   &options.RequestHeaderAuthenticationOptions{},
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that client certificates are verified against; the subject's CN is the user name and O the groups. Defaults to the generated CA in dev mode.")
	fs.BoolVar(&o.Anonymous, "anonymous-auth", o.Anonymous, "Treat requests without credentials as system:anonymous (group system:unauthenticated) instead of answering 401.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "CSV file of static bearer tokens, one per line: token,user,uid,\"group1,group2\".")
	fs.BoolVar(&o.BootstrapTokens, "enable-bootstrap-token-auth", o.BootstrapTokens, "Accept bootstrap tokens: Secrets of type bootstrap.kubernetes.io/token in kube-system, as nodes present them to join.")

	sa := &o.ServiceAccounts
	fs.StringVar(&sa.SigningKeyFile, "service-account-signing-key-file", sa.SigningKeyFile, "PEM private key (RSA or ECDSA) service-account tokens are signed with. Generated under <data-dir>/pki/sa.key when empty.")
	fs.StringSliceVar(&sa.KeyFiles, "service-account-key-file", sa.KeyFiles, "PEM files of public (or private) keys service-account tokens are verified with; repeatable. The signing key is always included.")
	fs.StringSliceVar(&sa.Issuers, "service-account-issuer", sa.Issuers, "Issuer (iss) of service-account tokens; repeatable: the first is used for new tokens, all are accepted. Default "+DefaultServiceAccountIssuer+".")
	fs.StringSliceVar(&sa.APIAudiences, "api-audiences", sa.APIAudiences, "Audiences a token must name to be accepted by the API. Defaults to the first service-account issuer.")
	fs.StringVar(&sa.JWKSURI, "service-account-jwks-uri", sa.JWKSURI, "jwks_uri of the issuer's OpenID Connect discovery document (/.well-known/openid-configuration); by default this server's /openid/v1/jwks at its external address.")
	fs.DurationVar(&sa.MaxExpiration, "service-account-max-token-expiration", sa.MaxExpiration, "Longest lifetime a TokenRequest may ask for; 0 means no cap.")

	oi := &o.OIDC
	fs.StringVar(&oi.IssuerURL, "oidc-issuer-url", oi.IssuerURL, "HTTPS URL of the OpenID Connect issuer whose ID tokens are accepted.")
	fs.StringVar(&oi.ClientID, "oidc-client-id", oi.ClientID, "Client ID that OIDC ID tokens must be issued for (their aud). Required with --oidc-issuer-url.")
	fs.StringVar(&oi.CAFile, "oidc-ca-file", oi.CAFile, "CA bundle the OIDC issuer's certificate is verified against; the host's roots when empty.")
	fs.StringVar(&oi.UsernameClaim, "oidc-username-claim", oi.UsernameClaim, "ID-token claim used as the user name.")
	fs.StringVar(&oi.UsernamePrefix, "oidc-username-prefix", oi.UsernamePrefix, "Prefix for OIDC user names; '-' for none. Default: the issuer URL and '#' unless the claim is email.")
	fs.StringVar(&oi.GroupsClaim, "oidc-groups-claim", oi.GroupsClaim, "ID-token claim (string or string array) holding the user's groups.")
	fs.StringVar(&oi.GroupsPrefix, "oidc-groups-prefix", oi.GroupsPrefix, "Prefix for OIDC group names.")
	fs.StringSliceVar(&oi.SigningAlgs, "oidc-signing-algs", oi.SigningAlgs, "JOSE algorithms OIDC ID tokens may be signed with.")
	fs.StringToStringVar(&oi.RequiredClaims, "oidc-required-claim", oi.RequiredClaims, "key=value claims every OIDC ID token must carry; repeatable.")

	fs.StringVar(&o.WebhookConfigFile, "authentication-token-webhook-config-file", o.WebhookConfigFile, "kubeconfig naming a remote service that answers TokenReviews for bearer tokens no other authenticator accepted.")
	fs.DurationVar(&o.WebhookCacheTTL, "authentication-token-webhook-cache-ttl", o.WebhookCacheTTL, "How long the webhook's answers are cached.")
	o.RequestHeader.AddFlags(fs)
}

// Validate reports every inconsistent option.
func (o *Options) Validate() []error {
	var errs []error
	if o.OIDC.IssuerURL != "" && o.OIDC.ClientID == "" {
		errs = append(errs, fmt.Errorf("--oidc-client-id is required with --oidc-issuer-url"))
	}
	if o.ServiceAccounts.MaxExpiration != 0 && o.ServiceAccounts.MaxExpiration < MinTokenExpiration {
		errs = append(errs, fmt.Errorf("--service-account-max-token-expiration must be at least %s", MinTokenExpiration))
	}
	errs = append(errs, o.RequestHeader.Validate()...)
	return errs
}

// MinTokenExpiration is the shortest lifetime a TokenRequest may ask for.
const MinTokenExpiration = 10 * time.Minute

// issuers returns the service-account issuers with the default applied.
func (o *Options) issuers() []string {
	if len(o.ServiceAccounts.Issuers) == 0 {
		return []string{DefaultServiceAccountIssuer}
	}
	return o.ServiceAccounts.Issuers
}

// apiAudiences returns the API audiences with the default applied.
func (o *Options) apiAudiences() []string {
	if len(o.ServiceAccounts.APIAudiences) == 0 {
		return o.issuers()[:1]
	}
	return o.ServiceAccounts.APIAudiences
}
