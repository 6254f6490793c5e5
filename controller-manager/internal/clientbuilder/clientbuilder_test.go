package clientbuilder

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
)

// recorder is an apiserver stand-in that remembers what each request
// carried.
type recorder struct {
	mu     sync.Mutex
	auth   []string
	agents []string
}

func (r *recorder) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.agents = append(r.agents, req.Header.Get("User-Agent"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"major":"1","minor":"37","gitVersion":"v1.37.0"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSimpleSharesCredentialsWithOwnUserAgent(t *testing.T) {
	var rec recorder
	srv := rec.server(t)
	b := Simple{Root: &rest.Config{Host: srv.URL, BearerToken: "manager-token"}}
	c, err := b.Client("resourcequota-controller")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
	if rec.auth[0] != "Bearer manager-token" {
		t.Errorf("authorization = %q", rec.auth[0])
	}
	if !strings.HasSuffix(rec.agents[0], "trireme-controller-manager/resourcequota-controller") {
		t.Errorf("user agent = %q", rec.agents[0])
	}
}

func TestServiceAccountsUseRequestedTokens(t *testing.T) {
	var rec recorder
	srv := rec.server(t)
	core := fake.NewClientset()
	var requested []int64
	core.PrependReactor("create", "serviceaccounts", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "token" {
			return false, nil, nil
		}
		create := action.(clienttesting.CreateActionImpl)
		req := create.GetObject().(*authenticationv1.TokenRequest)
		requested = append(requested, *req.Spec.ExpirationSeconds)
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token:               fmt.Sprintf("token-%d", len(requested)),
			ExpirationTimestamp: metav1.NewTime(time.Now().Add(time.Hour)),
		}}, nil
	})
	b := ServiceAccounts{
		Root:      &rest.Config{Host: srv.URL, BearerToken: "manager-token"},
		Core:      core,
		Namespace: "kube-system",
		Context:   context.Background(),
	}
	c, err := b.Client("service-account-controller")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
	if _, err := core.CoreV1().ServiceAccounts("kube-system").Get(context.Background(), "service-account-controller", metav1.GetOptions{}); err != nil {
		t.Errorf("account not created: %v", err)
	}
	if len(requested) != 1 || requested[0] != int64(DefaultTokenLifetime/time.Second) {
		t.Errorf("token requests = %v, want one of %v", requested, DefaultTokenLifetime)
	}
	if rec.auth[0] != "Bearer token-1" {
		t.Errorf("authorization = %q, want the requested token, not the manager's", rec.auth[0])
	}
}

func TestServiceAccountsFailWithoutTokenRequest(t *testing.T) {
	core := fake.NewClientset()
	core.PrependReactor("create", "serviceaccounts", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "token" {
			return false, nil, nil
		}
		return true, nil, fmt.Errorf("the server could not find the requested resource")
	})
	b := ServiceAccounts{Root: &rest.Config{Host: "https://127.0.0.1:1"}, Core: core, Namespace: "kube-system", Context: context.Background()}
	if _, err := b.Client("x"); err == nil || !strings.Contains(err.Error(), "request token") {
		t.Fatalf("err = %v, want a token request failure at start", err)
	}
}
