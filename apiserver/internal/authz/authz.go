// Package authz builds the apiserver's authorizer from its flags. Today:
// system:masters may do anything and everyone may read the health and
// version endpoints, as upstream's default RBAC allows. The RBAC, Node and
// Webhook modes plug in here.
package authz

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// publicPaths are readable by anyone, authenticated or not.
var publicPaths = []string{"/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz", "/readyz/*", "/version", "/version/"}

// Options are the authorization flags.
type Options struct{}

// NewOptions returns the defaults.
func NewOptions() *Options { return &Options{} }

// AddFlags registers the options on fs.
func (o *Options) AddFlags(*pflag.FlagSet) {}

// ApplyTo sets config's authorizer.
func (o *Options) ApplyTo(config *genericapiserver.Config) error {
	public, err := path.NewAuthorizer(publicPaths)
	if err != nil {
		return fmt.Errorf("public paths authorizer: %w", err)
	}
	masters := authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)
	a, err := union.New(
		union.NamedAuthorizer{AuthorizerName: "public-paths", Authorizer: public},
		union.NamedAuthorizer{AuthorizerName: "system-masters", Authorizer: masters},
	)
	if err != nil {
		return err
	}
	config.Authorization.Authorizer = a
	return nil
}
