package pki

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func inputs() Inputs {
	return Inputs{NodeName: "cp-1", AdvertiseAddress: net.ParseIP("10.0.0.2"), ServiceSubnet: "10.96.0.0/12",
		DNSDomain: "cluster.local", ControlPlaneEndpointHost: "cp.example.com", APIServerSANs: []string{"10.0.0.100", "extra.example"}}
}

func TestSpecs(t *testing.T) {
	specs, err := Specs(inputs())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]Spec{}
	for _, s := range specs {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	want := "ca apiserver apiserver-kubelet-client front-proxy-ca front-proxy-client etcd/ca etcd/server etcd/peer etcd/healthcheck-client apiserver-etcd-client"
	if strings.Join(names, " ") != want {
		t.Errorf("specs = %v, want %s", names, want)
	}
	api := byName["apiserver"]
	if strings.Join(api.DNSNames, ",") != "cp-1,kubernetes,kubernetes.default,kubernetes.default.svc,kubernetes.default.svc.cluster.local,cp.example.com,extra.example" {
		t.Errorf("apiserver DNS SANs = %v", api.DNSNames)
	}
	var ips []string
	for _, ip := range api.IPs {
		ips = append(ips, ip.String())
	}
	if strings.Join(ips, ",") != "10.96.0.1,10.0.0.2,10.0.0.100" {
		t.Errorf("apiserver IP SANs = %v", ips)
	}
	ext := inputs()
	ext.ExternalEtcd = true
	specs, _ = Specs(ext)
	if len(specs) != 5 {
		t.Errorf("external etcd: %d specs, want the 5 without etcd's", len(specs))
	}
	if _, err := Specs(Inputs{ServiceSubnet: "bad"}); err == nil {
		t.Error("bad service subnet accepted")
	}
}

func TestFirstIP(t *testing.T) {
	for cidr, want := range map[string]string{"10.96.0.0/12": "10.96.0.1", "192.168.1.0/24": "192.168.1.1", "fd00::/108": "fd00::1", "10.0.0.255/31": "10.0.0.255"} {
		ip, err := FirstIP(cidr)
		if err != nil || ip.String() != want {
			t.Errorf("FirstIP(%s) = %v, %v; want %s", cidr, ip, err, want)
		}
	}
}

func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	specs, _ := Specs(inputs())
	for _, s := range specs {
		if a, err := Ensure(dir, s, now); err != nil || a != Generated {
			t.Fatalf("Ensure(%s) = %v, %v", s.Name, a, err)
		}
	}
	for _, s := range specs {
		if a, err := Ensure(dir, s, now); err != nil || a != Reused {
			t.Fatalf("second Ensure(%s) = %v, %v", s.Name, a, err)
		}
	}
	ca, _ := Load(dir, CA)
	api, _ := Load(dir, "apiserver")
	if _, err := api.Cert.Verify(x509.VerifyOptions{Roots: poolOf(ca.Cert), DNSName: "kubernetes.default.svc"}); err != nil {
		t.Errorf("apiserver does not verify: %v", err)
	}
	if api.Cert.NotAfter.Sub(now) > CertValidity || ca.Cert.NotAfter.Sub(now) < 9*365*24*time.Hour {
		t.Errorf("validity: leaf until %v, CA until %v", api.Cert.NotAfter, ca.Cert.NotAfter)
	}

	// A new SAN makes the existing certificate unusable rather than silently replaced.
	more := inputs()
	more.APIServerSANs = append(more.APIServerSANs, "new.example")
	specs2, _ := Specs(more)
	if _, err := Ensure(dir, specs2[1], now); err == nil || !strings.Contains(err.Error(), "lacks SAN new.example") {
		t.Errorf("Ensure with a new SAN: %v", err)
	}
	// Expired.
	if _, err := Ensure(dir, specs[1], now.Add(2*CertValidity)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("Ensure after expiry: %v", err)
	}
	// Signed by another CA.
	other := t.TempDir()
	if _, err := Ensure(other, specs[0], now); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"apiserver.crt", "apiserver.key"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		os.WriteFile(filepath.Join(other, f), data, 0o600)
	}
	if _, err := Ensure(other, specs[1], now); err == nil || !strings.Contains(err.Error(), "not signed by ca") {
		t.Errorf("Ensure with another CA: %v", err)
	}
	// A certificate without its key.
	os.Remove(filepath.Join(other, "apiserver.key"))
	if _, err := Ensure(other, specs[1], now); err == nil {
		t.Error("certificate without key accepted")
	}
	// A leaf without its CA.
	if _, err := Ensure(t.TempDir(), specs[1], now); err == nil || !strings.Contains(err.Error(), "its CA") {
		t.Errorf("Ensure without CA: %v", err)
	}
}

func TestServiceAccountKey(t *testing.T) {
	dir := t.TempDir()
	if a, err := EnsureServiceAccountKey(dir); err != nil || a != Generated {
		t.Fatalf("first: %v %v", a, err)
	}
	pub1, _ := os.ReadFile(filepath.Join(dir, "sa.pub"))
	os.Remove(filepath.Join(dir, "sa.pub"))
	if a, err := EnsureServiceAccountKey(dir); err != nil || a != Reused {
		t.Fatalf("second: %v %v", a, err)
	}
	pub2, _ := os.ReadFile(filepath.Join(dir, "sa.pub"))
	if string(pub1) != string(pub2) {
		t.Error("sa.pub rewritten from the key differs")
	}
	if st, _ := os.Stat(filepath.Join(dir, "sa.key")); st.Mode().Perm() != 0o600 {
		t.Errorf("sa.key mode %v", st.Mode())
	}
}

func poolOf(c *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}
