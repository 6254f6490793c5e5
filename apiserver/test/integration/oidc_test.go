package integration

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestServiceAccountIssuerDiscovery checks what an OIDC verifier outside
// the cluster does with a service-account token: read the issuer's
// discovery document, fetch its key set, and verify the token with it.
// Service accounts may read both (upstream's default RBAC); anonymous
// users may not.
func TestServiceAccountIssuerDiscovery(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "verifier"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "verifier", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saConfig := rest.AnonymousClientConfig(config)
	saConfig.BearerToken = tr.Status.Token
	sa := kubernetes.NewForConfigOrDie(saConfig).Discovery().RESTClient()

	body, err := sa.Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil {
		t.Fatalf("discovery document as a service account: %v", err)
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("discovery document %s: %v", body, err)
	}
	parsed, err := jwt.ParseSigned(tr.Status.Token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var claims jwt.Claims
	if err := parsed.UnsafeClaimsWithoutVerification(&claims); err != nil {
		t.Fatal(err)
	}
	jwks, err := url.Parse(doc.JWKSURI)
	host, err2 := url.Parse(config.Host)
	if err != nil || err2 != nil || jwks.Scheme != "https" || jwks.Port() != host.Port() || jwks.Path != "/openid/v1/jwks" {
		t.Errorf("jwks_uri %q: want this server's /openid/v1/jwks", doc.JWKSURI)
	}
	if doc.Issuer != claims.Issuer {
		t.Errorf("discovery issuer %q, token issuer %q", doc.Issuer, claims.Issuer)
	}

	keys, err := sa.Get().AbsPath("/openid/v1/jwks").DoRaw(ctx)
	if err != nil {
		t.Fatalf("key set as a service account: %v", err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(keys, &set); err != nil {
		t.Fatal(err)
	}
	published := set.Key(parsed.Headers[0].KeyID)
	if len(published) != 1 {
		t.Fatalf("no published key has the token's kid %q: %s", parsed.Headers[0].KeyID, keys)
	}
	if err := parsed.Claims(published[0].Key, &claims); err != nil {
		t.Errorf("token does not verify with the published key: %v", err)
	}

	anon := kubernetes.NewForConfigOrDie(rest.AnonymousClientConfig(config)).Discovery().RESTClient()
	var code int
	anon.Get().AbsPath("/.well-known/openid-configuration").Do(ctx).StatusCode(&code)
	if code != http.StatusForbidden {
		t.Errorf("anonymous discovery answered %d, want 403", code)
	}
}
