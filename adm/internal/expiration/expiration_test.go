package expiration

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/pki"
)

func TestResidual(t *testing.T) {
	now := time.Now()
	for d, want := range map[time.Duration]string{-time.Hour: "<invalid>", 5 * time.Hour: "5h", 72 * time.Hour: "3d",
		364 * 24 * time.Hour: "364d", 10 * 365 * 24 * time.Hour: "10y"} {
		if got := Residual(now.Add(d), now); got != want {
			t.Errorf("Residual(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestCollectAndPrint(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	specs := []pki.Spec{{Name: pki.CA, CommonName: "kubernetes"}, {Name: "apiserver", CA: pki.CA, CommonName: "kube-apiserver"},
		{Name: "front-proxy-client", CA: "front-proxy-ca"}}
	for _, s := range specs[:2] {
		if _, err := pki.Ensure(dir, s, now); err != nil {
			t.Fatal(err)
		}
	}
	ca, _ := pki.Load(dir, pki.CA)
	spec := kubeconfig.Spec{File: "admin.conf", User: "kubernetes-admin", Server: "https://x:6443"}
	if _, err := kubeconfig.Ensure(dir+"/admin.conf", "trireme", spec, ca, now); err != nil {
		t.Fatal(err)
	}
	leaves, cas, err := Collect(dir, specs, dir, []string{"admin.conf", "missing.conf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaves) != 2 || len(cas) != 1 || leaves[1].Name != "admin.conf" {
		t.Errorf("leaves %+v cas %+v", leaves, cas)
	}
	var b bytes.Buffer
	Print(&b, leaves, cas, now)
	for _, w := range []string{"CERTIFICATE AUTHORITY", "apiserver", "admin.conf", "364d", "9y"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, b.String())
		}
	}
}
