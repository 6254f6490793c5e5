package authn

import (
	"context"
	"net/http"
	"testing"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/api/scheme"
)

// FuzzBearerToken sends arbitrary Authorization headers through the whole
// authenticator chain (token file, service-account JWTs, bootstrap tokens,
// anonymous): it must never panic, and only the one static token may
// authenticate as anyone but nobody: a bad credential is always a 401.
func FuzzBearerToken(f *testing.F) {
	o, _, _ := newTestOptions(f, true)
	o.BootstrapTokens = true
	config := genericapiserver.NewConfig(scheme.Codecs)
	config.SecureServing = &genericapiserver.SecureServingInfo{}
	client := fake.NewClientset()
	if _, err := o.ApplyTo(context.Background(), config, client, informers.NewSharedInformerFactory(client, 0)); err != nil {
		f.Fatal(err)
	}
	auth := config.Authentication.Authenticator
	for _, seed := range []string{"Bearer s3cr3t", "Bearer ", "Bearer abcdef.0123456789abcdef", "Bearer eyJhbGciOiJSUzI1NiJ9.e30.AAAA", "Basic Zm9vOmJhcg==", "bearer x y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		req, _ := http.NewRequest(http.MethodGet, "https://example/api", nil)
		req.Header.Set("Authorization", header)
		resp, ok, err := auth.AuthenticateRequest(req)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("ok with error %v", err)
		}
		switch name := resp.User.GetName(); name {
		case "bob", "system:anonymous":
		default:
			t.Fatalf("header %q authenticated as %q", header, name)
		}
	})
}
