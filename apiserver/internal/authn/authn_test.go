package authn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/api/scheme"
	"trireme.dev/componentbase/testpki"
)

// testCA makes a CA, writes its certificate to dir/name.crt and returns
// that path and a client certificate it signed for user in groups.
func testCA(t testing.TB, dir, name, user string, groups ...string) (string, *x509.Certificate) {
	t.Helper()
	ca := testpki.NewCA(name)
	caFile, _, err := ca.Write(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return caFile, ca.Issue(testpki.Cert{CommonName: user, Organization: groups, Usage: testpki.ClientAuth}).Cert
}

func newTestOptions(t testing.TB, anonymous bool) (*Options, *x509.Certificate, *x509.Certificate) {
	t.Helper()
	dir := t.TempDir()
	o := NewOptions()
	o.Anonymous = anonymous
	caFile, good := testCA(t, dir, "cluster-ca", "alice", "dev")
	_, foreign := testCA(t, dir, "other-ca", "mallory", "system:masters")
	o.ClientCAFile = caFile
	o.TokenAuthFile = filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(o.TokenAuthFile, []byte("s3cr3t,bob,bob-uid,\"ops,dev\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := o.EnsureServiceAccountKey(filepath.Join(dir, "pki")); err != nil {
		t.Fatal(err)
	}
	return o, good, foreign
}

func TestApplyToAuthenticates(t *testing.T) {
	tests := []struct {
		name       string
		anonymous  bool
		token      string
		cert       string // "good", "foreign" or ""
		wantOK     bool
		wantErr    bool
		wantUser   string
		wantGroups []string
	}{
		{name: "no credentials is anonymous", anonymous: true, wantOK: true, wantUser: "system:anonymous", wantGroups: []string{"system:unauthenticated"}},
		{name: "no credentials without anonymous-auth is rejected", anonymous: false, wantOK: false},
		{name: "static token", anonymous: true, token: "s3cr3t", wantOK: true, wantUser: "bob", wantGroups: []string{"ops", "dev", "system:authenticated"}},
		{name: "bad token is not anonymous", anonymous: true, token: "nope", wantErr: true},
		{name: "malformed JWT is not anonymous", anonymous: true, token: "eyJhbGciOiJSUzI1NiJ9.e30.AAAA", wantErr: true},
		{name: "client certificate", anonymous: true, cert: "good", wantOK: true, wantUser: "alice", wantGroups: []string{"dev", "system:authenticated"}},
		{name: "certificate from another CA", anonymous: true, cert: "foreign", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, good, foreign := newTestOptions(t, tc.anonymous)
			config := genericapiserver.NewConfig(scheme.Codecs)
			config.SecureServing = &genericapiserver.SecureServingInfo{}
			client := fake.NewClientset()
			factory := informers.NewSharedInformerFactory(client, 0)
			res, err := o.ApplyTo(context.Background(), config, client, factory)
			if err != nil {
				t.Fatal(err)
			}
			if res.TokenIssuer == nil || res.TokenAuthenticator == nil {
				t.Fatal("ApplyTo returned no token issuer or authenticator")
			}
			req, _ := http.NewRequest(http.MethodGet, "https://example/api", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			switch tc.cert {
			case "good":
				req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{good}}
			case "foreign":
				req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{foreign}}
			}
			resp, ok, err := config.Authentication.Authenticator.AuthenticateRequest(req)
			if (err != nil) != tc.wantErr || ok != tc.wantOK {
				t.Fatalf("ok=%v err=%v, want ok=%v wantErr=%v", ok, err, tc.wantOK, tc.wantErr)
			}
			if !ok {
				return
			}
			if resp.User.GetName() != tc.wantUser || !slices.Equal(resp.User.GetGroups(), tc.wantGroups) {
				t.Errorf("user %q groups %v, want %q %v", resp.User.GetName(), resp.User.GetGroups(), tc.wantUser, tc.wantGroups)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	o := NewOptions()
	o.OIDC.IssuerURL = "https://issuer.example"
	o.ServiceAccounts.MaxExpiration = time.Minute
	if errs := o.Validate(); len(errs) != 2 {
		t.Fatalf("Validate() = %v, want the client-id and max-expiration errors", errs)
	}
}

func TestOIDCUsernamePrefix(t *testing.T) {
	for _, tc := range []struct{ name, claim, prefix, want string }{
		{"sub claim defaults to issuer prefix", "sub", "", "https://i#"},
		{"email claim has no default prefix", "email", "", ""},
		{"dash disables the prefix", "sub", "-", ""},
		{"explicit prefix", "sub", "oidc:", "oidc:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := oidcUsernamePrefix(OIDCOptions{IssuerURL: "https://i", UsernameClaim: tc.claim, UsernamePrefix: tc.prefix})
			if *got != tc.want {
				t.Errorf("prefix = %q, want %q", *got, tc.want)
			}
		})
	}
}
