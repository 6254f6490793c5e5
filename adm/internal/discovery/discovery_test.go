package discovery

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"

	"trireme.dev/componentbase/testpki"
)

func TestVerify(t *testing.T) {
	trireme := testpki.NewCA("trireme")
	ca, caPEM, other := trireme.Cert, trireme.CertPEM, testpki.NewCA("trireme").Cert
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[""] = &clientcmdapi.Cluster{Server: "https://10.0.0.1:6443", CertificateAuthorityData: caPEM}
	content, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	const token = "abcdef.0123456789abcdef"
	sig, err := jws.ComputeDetachedSignature(string(content), "abcdef", "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	signed := map[string]string{bootstrapapi.KubeConfigKey: string(content), bootstrapapi.JWSSignatureKeyPrefix + "abcdef": sig}
	tests := []struct {
		name   string
		data   map[string]string
		token  string
		hashes []string
		skip   bool
		want   string // error substring; "" for success
	}{
		{"pinned", signed, token, []string{CAHash(ca)}, false, ""},
		{"pinned among others", signed, token, []string{CAHash(other), strings.ToUpper(CAHash(ca))}, false, ""},
		{"unsafe skip", signed, token, nil, true, ""},
		{"wrong pin", signed, token, []string{CAHash(other)}, false, "matches none"},
		{"wrong secret", signed, "abcdef.ffffffffffffffff", []string{CAHash(ca)}, false, "does not match"},
		{"not signed for the token", signed, "zzzzzz.0123456789abcdef", []string{CAHash(ca)}, false, "not signed"},
		{"no kubeconfig", map[string]string{}, token, []string{CAHash(ca)}, false, "has no"},
		{"malformed token", signed, "nodot", []string{CAHash(ca)}, false, "<id>.<secret>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Verify(tt.data, tt.token, tt.hashes, tt.skip)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if res.Server != "https://10.0.0.1:6443" || !res.CA.Equal(ca) {
					t.Errorf("got %s %v", res.Server, res.CA.Subject)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}
