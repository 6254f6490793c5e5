package renew

import (
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/pki"
)

// cluster writes a control-plane node's certificates and kubeconfigs as
// init does, at then, below a new directory.
func cluster(t *testing.T, then time.Time) (Dirs, []pki.Spec) {
	t.Helper()
	dir := t.TempDir()
	d := Dirs{PKI: filepath.Join(dir, "pki"), Config: dir}
	specs, err := pki.Specs(pki.Inputs{NodeName: "cp-1", AdvertiseAddress: net.ParseIP("10.0.0.2"), ServiceSubnet: "10.96.0.0/12",
		DNSDomain: "cluster.local", APIServerSANs: []string{"cp.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if _, err := pki.Ensure(d.PKI, s, then); err != nil {
			t.Fatal(err)
		}
	}
	ca, _ := pki.Load(d.PKI, pki.CA)
	for _, s := range kubeconfig.Specs(kubeconfig.Inputs{ClusterName: "trireme", NodeName: "cp-1", ControlPlaneURL: "https://cp.example.com:6443", LocalURL: "https://10.0.0.2:6443", VIPManager: true}) {
		if _, err := kubeconfig.Ensure(filepath.Join(dir, s.File), "trireme", s, ca, then); err != nil {
			t.Fatal(err)
		}
	}
	return d, specs
}

func TestRenew(t *testing.T) {
	then := time.Now().Add(-300 * 24 * time.Hour)
	d, specs := cluster(t, then)
	now := time.Now()
	targets := Targets(specs)
	for _, tc := range []struct {
		name, ca string
		users    []string
	}{
		{"apiserver", pki.CA, []string{"kube-apiserver"}},
		{"apiserver-kubelet-client", pki.CA, []string{"kube-apiserver"}},
		{"front-proxy-client", pki.FrontProxyCA, []string{"kube-apiserver"}},
		{"etcd/server", pki.EtcdCA, []string{"etcd"}},
		{"etcd/peer", pki.EtcdCA, []string{"etcd"}},
		{"etcd/healthcheck-client", pki.EtcdCA, nil},
		{"apiserver-etcd-client", pki.EtcdCA, []string{"kube-apiserver"}},
		{"admin.conf", pki.CA, nil},
		{"super-admin.conf", pki.CA, nil},
		{"controller-manager.conf", pki.CA, []string{"kube-controller-manager"}},
		{"scheduler.conf", pki.CA, []string{"kube-scheduler"}},
		{"vip-manager.conf", pki.CA, []string{"trireme-vip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := Select(targets, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			tg := sel[0]
			if tg.CA != tc.ca || !slices.Equal(tg.Users, tc.users) {
				t.Errorf("target %+v, want CA %s users %v", tg, tc.ca, tc.users)
			}
			old := read(t, d, tg)
			notAfter, err := Renew(d, tg, now)
			if err != nil {
				t.Fatal(err)
			}
			got := read(t, d, tg)
			if !got.NotAfter.Equal(notAfter) || !notAfter.After(old.NotAfter) || notAfter.Before(now.Add(pki.CertValidity-time.Hour)) {
				t.Errorf("expires %s (returned %s), was %s", got.NotAfter, notAfter, old.NotAfter)
			}
			if got.Subject.String() != old.Subject.String() || !slices.Equal(got.DNSNames, old.DNSNames) ||
				len(got.IPAddresses) != len(old.IPAddresses) || !slices.Equal(got.ExtKeyUsage, old.ExtKeyUsage) {
				t.Errorf("renewed %v %v %v %v, was %v %v %v %v", got.Subject, got.DNSNames, got.IPAddresses, got.ExtKeyUsage,
					old.Subject, old.DNSNames, old.IPAddresses, old.ExtKeyUsage)
			}
			ca, _ := pki.Load(d.PKI, tc.ca)
			if err := got.CheckSignatureFrom(ca.Cert); err != nil {
				t.Errorf("not signed by %s: %v", tc.ca, err)
			}
		})
	}
	// The kubeconfigs keep their server, and their key matches the certificate.
	cfg, err := clientcmd.LoadFromFile(filepath.Join(d.Config, "controller-manager.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; s != "https://10.0.0.2:6443" {
		t.Errorf("server %s after renewal", s)
	}
	ca, _ := pki.Load(d.PKI, pki.CA)
	spec := kubeconfig.Spec{File: "controller-manager.conf", User: "system:kube-controller-manager", Server: "https://10.0.0.2:6443"}
	if a, err := kubeconfig.Ensure(filepath.Join(d.Config, spec.File), "trireme", spec, ca, now); err != nil || a != pki.Reused {
		t.Errorf("init would not reuse the renewed kubeconfig: %v %v", a, err)
	}
}

func read(t *testing.T, d Dirs, tg Target) *x509.Certificate {
	t.Helper()
	if tg.Kubeconfig {
		c, err := kubeconfig.ClientCert(filepath.Join(d.Config, tg.Name))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	kp, err := pki.Load(d.PKI, tg.Name)
	if err != nil {
		t.Fatal(err)
	}
	return kp.Cert
}

func TestSelect(t *testing.T) {
	targets := Targets([]pki.Spec{{Name: pki.CA}, {Name: "apiserver", CA: pki.CA}})
	for _, tc := range []struct {
		arg  string
		want []string
		err  string
	}{
		{"all", []string{"apiserver", "admin.conf", "super-admin.conf", "controller-manager.conf", "scheduler.conf", "vip-manager.conf", "cloud-controller-manager.conf"}, ""},
		{"apiserver", []string{"apiserver"}, ""},
		{"ca", nil, `unknown certificate "ca"`},
		{"kubelet.conf", nil, `unknown certificate "kubelet.conf"`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			got, err := Select(targets, tc.arg)
			var names []string
			for _, g := range got {
				names = append(names, g.Name)
			}
			if !slices.Equal(names, tc.want) || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Select(%s) = %v, %v; want %v, %q", tc.arg, names, err, tc.want, tc.err)
			}
		})
	}
}

func TestRenewRefused(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name   string
		target Target
		break_ func(d Dirs)
		err    string
		is     error
	}{
		{"no CA key", Target{Name: "apiserver", CA: pki.CA}, func(d Dirs) { os.Remove(pki.KeyPath(d.PKI, pki.CA)) },
			"key " + "%PKI%/ca.key is not on this node", nil},
		{"no etcd CA key for a kubeconfig's sibling", Target{Name: "etcd/server", CA: pki.EtcdCA}, func(d Dirs) { os.Remove(pki.KeyPath(d.PKI, pki.EtcdCA)) },
			"--certificate-key", nil},
		{"missing certificate", Target{Name: "apiserver", CA: pki.CA}, func(d Dirs) { os.Remove(pki.CertPath(d.PKI, "apiserver")) }, "", ErrMissing},
		{"missing kubeconfig", Target{Name: "cloud-controller-manager.conf", Kubeconfig: true, CA: pki.CA}, func(Dirs) {}, "", ErrMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := cluster(t, now)
			tc.break_(d)
			before, _ := os.ReadFile(pki.CertPath(d.PKI, tc.target.Name))
			_, err := Renew(d, tc.target, now)
			if err == nil {
				t.Fatal("renewed")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
			if want := strings.ReplaceAll(tc.err, "%PKI%", d.PKI); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
			if after, _ := os.ReadFile(pki.CertPath(d.PKI, tc.target.Name)); string(after) != string(before) {
				t.Error("the certificate changed though renewal failed")
			}
		})
	}
}
