package apis

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"trireme.dev/apiserver/internal/registry/authentication"
	"trireme.dev/apiserver/internal/registry/serviceaccounts"
)

// addAuthentication adds serviceaccounts/token and the create-only
// authentication.k8s.io/v1 reviews.
func addAuthentication(byGV map[schema.GroupVersion]map[string]rest.Storage, stores Stores, cfg Config) {
	if cfg.TokenIssuer != nil {
		byGV[corev1.SchemeGroupVersion]["serviceaccounts/token"] = &serviceaccounts.TokenStore{
			ServiceAccounts: stores[corev1.Resource("serviceaccounts")],
			Pods:            stores[corev1.Resource("pods")],
			Secrets:         stores[corev1.Resource("secrets")],
			Nodes:           stores[corev1.Resource("nodes")],
			Signer:          cfg.TokenIssuer,
			APIAudiences:    cfg.TokenIssuer.APIAudiences,
			MaxExpiration:   cfg.TokenIssuer.MaxExpiration,
		}
	}
	group := map[string]rest.Storage{"selfsubjectreviews": &authentication.SelfSubjectReviewStore{}}
	if cfg.TokenAuthenticator != nil {
		group["tokenreviews"] = &authentication.TokenReviewStore{Authenticator: cfg.TokenAuthenticator}
	}
	byGV[authenticationv1.SchemeGroupVersion] = group
}
