package dashboard_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

// TestOIDCSignIn signs in to the console with an OpenID Connect ID token,
// against an apiserver that trusts a test issuer: the page names the user
// from the token's email claim and shows what its group may see; an
// expired token is refused with the reason.
func TestOIDCSignIn(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	issuer := oidcIssuer(t, key)
	caFile := filepath.Join(t.TempDir(), "issuer-ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: issuer.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	own := testcluster.StartAPIServer(t, testcluster.APIServerOptions{ExtraArgs: []string{
		"--oidc-issuer-url", issuer.URL, "--oidc-client-id", "trireme-dashboard", "--oidc-ca-file", caFile,
		"--oidc-username-claim", "email", "--oidc-groups-claim", "groups",
	}})
	cs, err := kubernetes.NewForConfig(own.Config())
	if err != nil {
		t.Fatal(err)
	}
	// A role of its own: view's rules come from aggregation, which the
	// controller-manager this server runs without would do.
	if _, err := cs.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "namespace-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "oidc-viewers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "namespace-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "dash-viewers"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claims := func(exp time.Time) map[string]any {
		return map[string]any{"iss": issuer.URL, "aud": "trireme-dashboard", "sub": "alice-1", "email": "alice@example.com",
			"email_verified": true, "groups": []string{"dash-viewers"}, "iat": time.Now().Add(-time.Minute).Unix(), "exp": exp.Unix()}
	}
	base := console.Start(t, own.KubeconfigPath())
	tab := browser.New(t)

	browser.Run(t, tab, "an expired ID token is refused",
		browser.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), signJWT(t, key, claims(time.Now().Add(-time.Minute)))),
		chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
		browser.WaitText("#reason", "Sign-in refused"),
	)
	browser.Run(t, tab, "sign in with an ID token",
		browser.SignIn(base, signJWT(t, key, claims(time.Now().Add(time.Hour))), "alice@example.com"),
		chromedp.Navigate(base+"/#/list/v1/namespaces"),
		browser.WaitText("#view", "kube-system"),
	)
}

// oidcIssuer serves an OpenID Connect issuer's discovery document and its
// one signing key, over HTTPS.
func oidcIssuer(t *testing.T, key *rsa.PrivateKey) *httptest.Server {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "jwks_uri": srv.URL + "/jwks",
				"id_token_signing_alg_values_supported": []string{"RS256"}})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
				"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
				"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
			}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// signJWT returns claims as a compact JWS signed with key (RS256, kid k1).
func signJWT(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "k1", "typ": "JWT"})
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	signed := b64(header) + "." + b64(payload)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + b64(sig)
}
