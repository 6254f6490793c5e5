// Package authn builds the apiserver's request authenticator from its
// flags: client certificates, and anonymous requests as system:anonymous.
// Token authenticators (static file, bootstrap tokens, service-account JWTs,
// OIDC, webhook) and request-header authentication plug in here.
package authn

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// Options are the authentication flags.
type Options struct {
	// ClientCAFile verifies client certificates; CN is the user, O the groups.
	ClientCAFile string
	// Anonymous lets requests without credentials in as system:anonymous.
	Anonymous bool
}

// NewOptions returns upstream's defaults.
func NewOptions() *Options { return &Options{Anonymous: true} }

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that client certificates are verified against; the subject's CN is the user name and O the groups. Defaults to the generated CA in dev mode.")
	fs.BoolVar(&o.Anonymous, "anonymous-auth", o.Anonymous, "Treat requests without credentials as system:anonymous (group system:unauthenticated) instead of answering 401.")
}

// ApplyTo sets config's authenticator and asks TLS clients for certificates
// signed by the client CA.
func (o *Options) ApplyTo(config *genericapiserver.Config) error {
	if o.ClientCAFile == "" {
		return fmt.Errorf("--client-ca-file is required when a serving certificate is given")
	}
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", o.ClientCAFile)
	if err != nil {
		return fmt.Errorf("client CA: %w", err)
	}
	if err := config.Authentication.ApplyClientCert(ca, config.SecureServing); err != nil {
		return fmt.Errorf("client CA: %w", err)
	}
	// Every authenticated identity is also in system:authenticated, the
	// group the default RBAC policy grants discovery and self-review to.
	authenticators := []authenticator.Request{group.NewAuthenticatedGroupAdder(x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion))}
	if o.Anonymous {
		authenticators = append(authenticators, anonymous.NewAuthenticator(nil))
	}
	config.Authentication.Authenticator = union.New(authenticators...)
	return nil
}
