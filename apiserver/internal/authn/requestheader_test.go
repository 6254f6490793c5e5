package authn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"path/filepath"
	"testing"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/api/scheme"
)

func TestRequestHeader(t *testing.T) {
	o, _, _ := newTestOptions(t, true)
	dir := filepath.Dir(o.TokenAuthFile)
	proxyCA, proxyCert := testCA(t, dir, "front-proxy-ca", "front-proxy-client")
	_, strangerCert := testCA(t, dir, "stranger-ca", "front-proxy-client")
	o.RequestHeader.ClientCAFile = proxyCA
	o.RequestHeader.AllowedNames = []string{"front-proxy-client"}
	o.RequestHeader.UsernameHeaders = []string{"X-Remote-User"}
	o.RequestHeader.GroupHeaders = []string{"X-Remote-Group"}
	o.RequestHeader.ExtraHeaderPrefixes = []string{"X-Remote-Extra-"}

	config := genericapiserver.NewConfig(scheme.Codecs)
	config.SecureServing = &genericapiserver.SecureServingInfo{}
	client := fake.NewClientset()
	if _, err := o.ApplyTo(context.Background(), config, client, informers.NewSharedInformerFactory(client, 0)); err != nil {
		t.Fatal(err)
	}
	if config.Authentication.RequestHeaderConfig == nil {
		t.Fatal("RequestHeaderConfig not set: the headers would not be stripped from other requests")
	}
	for _, tc := range []struct {
		name     string
		cert     *x509.Certificate
		wantUser string
	}{
		{name: "front proxy asserts the user", cert: proxyCert, wantUser: "carol"},
		{name: "headers from an untrusted client are ignored", cert: strangerCert, wantUser: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, "https://example/apis", nil)
			req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tc.cert}}
			req.Header.Set("X-Remote-User", "carol")
			req.Header.Set("X-Remote-Group", "team")
			resp, ok, _ := config.Authentication.Authenticator.AuthenticateRequest(req)
			got := ""
			if ok {
				got = resp.User.GetName()
			}
			if got != tc.wantUser {
				t.Fatalf("user = %q, want %q", got, tc.wantUser)
			}
		})
	}

	data, err := o.authInfo()
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"requestheader-allowed-names":        `["front-proxy-client"]`,
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
	} {
		if data[key] != want {
			t.Errorf("%s = %q, want %q", key, data[key], want)
		}
	}
	if data["client-ca-file"] == "" || data["requestheader-client-ca-file"] == "" {
		t.Error("CA bundles missing from the published authentication info")
	}
}
