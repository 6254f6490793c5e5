package authn

import (
	"github.com/go-logr/logr"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"trireme.dev/apiserver/internal/authn/satoken"
)

// InstallDiscovery serves the service-account issuer's OpenID Connect
// discovery document and key set on srv, authorized as any other
// non-resource URL (upstream's system:service-account-issuer-discovery
// role grants them to every service account). An issuer that is not an
// https URL cannot be discovered: the server then logs why and serves
// neither, as upstream does.
func (o *Options) InstallDiscovery(srv *genericapiserver.GenericAPIServer, r *Result, log logr.Logger) {
	jwksURI := o.ServiceAccounts.JWKSURI
	if jwksURI == "" {
		jwksURI = "https://" + srv.ExternalAddress + satoken.JWKSPath
	}
	d, err := satoken.NewDiscovery(o.issuers()[0], jwksURI, r.serviceAccountKeys)
	if err != nil {
		log.Info("Not serving service account issuer discovery", "reason", err.Error())
		return
	}
	mux := srv.Handler.NonGoRestfulMux
	mux.HandleFunc(satoken.DiscoveryPath, d.ServeConfig)
	mux.HandleFunc(satoken.JWKSPath, d.ServeKeys)
}
