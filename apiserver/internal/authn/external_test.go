package authn

import (
	"context"
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

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/api/scheme"
	"trireme.dev/componentbase/testoidc"
)

// writeServerCA stores the httptest server's certificate as a CA bundle.
func writeServerCA(t *testing.T, srv *httptest.Server, path string) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func bearer(auth authenticator.Request, token string) (*authenticator.Response, bool, error) {
	req, _ := http.NewRequest(http.MethodGet, "https://example/api", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return auth.AuthenticateRequest(req)
}

func TestOIDCAndWebhookTokens(t *testing.T) {
	provider := testoidc.Start(t)
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
	o.OIDC.CAFile = provider.CAFile
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
		tok := provider.Token(t, base)
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
			if _, ok, err := bearer(auth, provider.Token(t, claims)); ok || err == nil {
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
