package addons

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestMetricsServerCertificate: without certificates given as values (a
// real install), the chart makes a CA that the APIService trusts and a
// serving certificate it signed for every name the aggregator may dial the
// Service by.
func TestMetricsServerCertificate(t *testing.T) {
	ch, err := Chart("")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := Render(ch, Values(inputs))
	if err != nil {
		t.Fatal(err)
	}
	var secret, caBundle map[string]string
	for _, doc := range strings.Split(manifest, "\n---") {
		var obj struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
			Spec     struct {
				CABundle string `json:"caBundle"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		switch {
		case obj.Kind == "Secret" && obj.Metadata.Name == "metrics-server-tls":
			secret = obj.Data
		case obj.Kind == "APIService" && obj.Metadata.Name == "v1beta1.metrics.k8s.io":
			caBundle = map[string]string{"ca.crt": obj.Spec.CABundle}
		}
	}
	if secret == nil || caBundle == nil {
		t.Fatalf("rendered Secret metrics-server-tls: %v, APIService v1beta1.metrics.k8s.io: %v", secret != nil, caBundle != nil)
	}
	if secret["ca.crt"] != caBundle["ca.crt"] {
		t.Error("the APIService's caBundle is not the Secret's ca.crt")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(decode(t, caBundle["ca.crt"])) {
		t.Fatal("no certificate in the caBundle")
	}
	block, _ := pem.Decode(decode(t, secret["tls.crt"]))
	if block == nil {
		t.Fatal("no PEM in tls.crt")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"metrics-server.kube-system.svc", "metrics-server.kube-system.svc.cluster.local"} {
		t.Run(name, func(t *testing.T) {
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Error(err)
			}
		})
	}
	if len(decode(t, secret["tls.key"])) == 0 {
		t.Error("empty tls.key")
	}
}

func decode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
