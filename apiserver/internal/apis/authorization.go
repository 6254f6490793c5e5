package apis

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"

	"trireme.dev/apiserver/internal/registry"
	authorizationregistry "trireme.dev/apiserver/internal/registry/authorization"
	rbacregistry "trireme.dev/apiserver/internal/registry/rbac"
)

// AuthorizationConfig is what the RBAC and authorization.k8s.io storage
// need from the server's authorization.
type AuthorizationConfig struct {
	// Authorizer answers access reviews and the escalate and bind checks.
	Authorizer authorizer.Authorizer
	// RuleResolver answers SelfSubjectRulesReviews.
	RuleResolver authorizer.RuleResolver
	// RBACRules resolves the rules users hold and roles grant for the
	// escalation checks. Nil leaves RBAC writes unguarded.
	RBACRules rbacregistry.RuleResolver
}

// addAuthorization guards the RBAC stores and serves authorization.k8s.io.
func addAuthorization(byGV map[schema.GroupVersion]map[string]rest.Storage, stores Stores, cfg AuthorizationConfig) {
	if cfg.Authorizer == nil {
		return
	}
	if cfg.RBACRules != nil {
		rbacStores := map[string]*registry.Store{}
		for _, name := range []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"} {
			rbacStores[name] = stores[rbacv1.Resource(name)]
		}
		for name, s := range rbacregistry.Guarded(rbacStores, &rbacregistry.Guard{Authorizer: cfg.Authorizer, Rules: cfg.RBACRules}) {
			byGV[rbacv1.SchemeGroupVersion][name] = s
		}
	}
	byGV[authorizationv1.SchemeGroupVersion] = authorizationregistry.Storage(cfg.Authorizer, cfg.RuleResolver)
}
