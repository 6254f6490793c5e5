package authn

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/api/scheme"
)

// writeServerCA stores the httptest server's certificate as a CA bundle.
func writeServerCA(t *testing.T, srv *httptest.Server, path string) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fakeOIDCProvider serves discovery and a JWKS for key.
func fakeOIDCProvider(t *testing.T, key *rsa.PrivateKey) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL, "jwks_uri": srv.URL + "/jwks"})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func idToken(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func bearer(auth authenticator.Request, token string) (*authenticator.Response, bool, error) {
	req, _ := http.NewRequest(http.MethodGet, "https://example/api", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return auth.AuthenticateRequest(req)
}

func TestOIDCAndWebhookTokens(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	provider := fakeOIDCProvider(t, key)
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		review.Status.Authenticated = review.Spec.Token == "hook-token"
		if review.Status.Authenticated {
			review.Status.User = authenticationv1.UserInfo{Username: "hook-user", Groups: []string{"hookers"}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(hook.Close)

	o, _, _ := newTestOptions(t, true)
	dir := filepath.Dir(o.TokenAuthFile)
	o.OIDC.IssuerURL = provider.URL
	o.OIDC.ClientID = "trireme"
	o.OIDC.GroupsClaim = "groups"
	o.OIDC.GroupsPrefix = "oidc:"
	o.OIDC.CAFile = filepath.Join(dir, "oidc-ca.crt")
	writeServerCA(t, provider, o.OIDC.CAFile)
	hookCA := filepath.Join(dir, "hook-ca.crt")
	writeServerCA(t, hook, hookCA)
	o.WebhookConfigFile = filepath.Join(dir, "webhook.kubeconfig")
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: %s\n    certificate-authority: %s\nusers:\n- name: apiserver\n  user: {}\ncontexts:\n- name: hook\n  context: {cluster: hook, user: apiserver}\ncurrent-context: hook\n", hook.URL, hookCA)
	if err := os.WriteFile(o.WebhookConfigFile, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	config := genericapiserver.NewConfig(scheme.Codecs)
	config.SecureServing = &genericapiserver.SecureServingInfo{}
	client := fake.NewClientset()
	if _, err := o.ApplyTo(ctx, config, client, informers.NewSharedInformerFactory(client, 0)); err != nil {
		t.Fatal(err)
	}
	auth := config.Authentication.Authenticator
	now := time.Now()
	base := map[string]any{"iss": provider.URL, "aud": "trireme", "sub": "u-42", "groups": []string{"admins"}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}

	t.Run("OIDC ID token", func(t *testing.T) {
		tok := idToken(t, key, base)
		var resp *authenticator.Response
		// The provider's keys are fetched asynchronously after start.
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
			r, ok, _ := bearer(auth, tok)
			resp = r
			return ok, nil
		})
		if err != nil {
			t.Fatal("OIDC token never authenticated")
		}
		if want := provider.URL + "#u-42"; resp.User.GetName() != want {
			t.Errorf("user = %q, want %q", resp.User.GetName(), want)
		}
		if !slices.Contains(resp.User.GetGroups(), "oidc:admins") {
			t.Errorf("groups = %v", resp.User.GetGroups())
		}
	})
	for name, mutate := range map[string]func(map[string]any){
		"OIDC token for another client": func(c map[string]any) { c["aud"] = "someone-else" },
		"expired OIDC token":            func(c map[string]any) { c["exp"] = now.Add(-time.Hour).Unix() },
	} {
		t.Run(name, func(t *testing.T) {
			claims := map[string]any{}
			for k, v := range base {
				claims[k] = v
			}
			mutate(claims)
			if _, ok, err := bearer(auth, idToken(t, key, claims)); ok || err == nil {
				t.Fatalf("ok=%v err=%v, want a rejection", ok, err)
			}
		})
	}
	t.Run("webhook token", func(t *testing.T) {
		resp, ok, err := bearer(auth, "hook-token")
		if !ok || err != nil || resp.User.GetName() != "hook-user" || !slices.Contains(resp.User.GetGroups(), "hookers") {
			t.Fatalf("ok=%v err=%v resp=%+v", ok, err, resp)
		}
	})
	t.Run("webhook rejection is 401", func(t *testing.T) {
		if _, ok, err := bearer(auth, "not-hook-token"); ok || err == nil {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
	})
}
