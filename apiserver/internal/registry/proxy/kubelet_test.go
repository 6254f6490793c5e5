package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

func TestKubeletConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*KubeletConfig)
		wantErr int
	}{
		{name: "defaults", mutate: func(*KubeletConfig) {}},
		{name: "certificate and key", mutate: func(c *KubeletConfig) { c.CertFile, c.KeyFile = "c", "k" }},
		{name: "certificate without key", mutate: func(c *KubeletConfig) { c.CertFile = "c" }, wantErr: 1},
		{name: "key without certificate", mutate: func(c *KubeletConfig) { c.KeyFile = "k" }, wantErr: 1},
		{name: "unknown address type", mutate: func(c *KubeletConfig) { c.PreferredAddressTypes = []string{"InternalIP", "LegacyHostIP"} }, wantErr: 1},
		{name: "no address types", mutate: func(c *KubeletConfig) { c.PreferredAddressTypes = nil }, wantErr: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewKubeletConfig()
			tt.mutate(&c)
			if errs := c.Validate(); len(errs) != tt.wantErr {
				t.Fatalf("Validate() = %v, want %d errors", errs, tt.wantErr)
			}
		})
	}
}

func TestKubeletTransport(t *testing.T) {
	dir := t.TempDir()
	caFile, certFile, keyFile := NewTestPKI("127.0.0.1").WriteClientFiles(t, dir, "kubelet")

	tests := []struct {
		name         string
		cfg          KubeletConfig
		wantInsecure bool
		wantCert     bool
		wantErr      bool
	}{
		{name: "no CA does not verify", cfg: KubeletConfig{}, wantInsecure: true},
		{name: "CA verifies", cfg: KubeletConfig{CAFile: caFile}},
		{name: "client certificate presented", cfg: KubeletConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}, wantCert: true},
		{name: "missing CA file", cfg: KubeletConfig{CAFile: filepath.Join(dir, "nope")}, wantErr: true},
		{name: "missing key file", cfg: KubeletConfig{CertFile: certFile, KeyFile: filepath.Join(dir, "nope")}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := tt.cfg.Transport()
			if tt.wantErr {
				if err == nil {
					t.Fatal("Transport() succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc := rt.(*http.Transport).TLSClientConfig
			if tc.InsecureSkipVerify != tt.wantInsecure {
				t.Fatalf("InsecureSkipVerify = %v, want %v", tc.InsecureSkipVerify, tt.wantInsecure)
			}
			hasCert := tc.GetClientCertificate != nil || len(tc.Certificates) > 0
			if hasCert != tt.wantCert {
				t.Fatalf("client certificate configured = %v, want %v", hasCert, tt.wantCert)
			}
		})
	}
}

// TestKubeletTransportHandshake talks to a fake kubelet that demands a
// client certificate from the CA and serves one the CA signed.
func TestKubeletTransportHandshake(t *testing.T) {
	dir := t.TempDir()
	pki := NewTestPKI("127.0.0.1")
	kubelet := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	kubelet.TLS = pki.ServerTLS()
	kubelet.StartTLS()
	defer kubelet.Close()
	caFile, certFile, keyFile := pki.WriteClientFiles(t, dir, "kubelet")

	tests := []struct {
		name    string
		cfg     KubeletConfig
		wantErr bool
	}{
		{name: "verified with client certificate", cfg: KubeletConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}},
		{name: "unverified with client certificate", cfg: KubeletConfig{CertFile: certFile, KeyFile: keyFile}},
		{name: "no client certificate is refused by the kubelet", cfg: KubeletConfig{CAFile: caFile}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := tt.cfg.Transport()
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: rt}).Get(kubelet.URL + "/healthz")
			if tt.wantErr {
				if err == nil {
					resp.Body.Close()
					t.Fatal("request succeeded, want a TLS error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if string(body) != KubeletClientCN {
				t.Fatalf("kubelet saw client %q, want %q", body, KubeletClientCN)
			}
		})
	}
}
