// Package renew renews the cluster's certificates and the client certificates
// of its kubeconfigs with the CA that signed them (`triremeadm certs renew`),
// as kubeadm does: each new certificate copies the old one's subject, SANs and
// usages, gets a new key and a year's validity, and the static pods that load
// it are restarted so that they read it.
package renew

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/staticpod"
)

// Target is one renewable certificate.
type Target struct {
	// Name is the certificate's name below the certificates directory
	// ("apiserver", "etcd/server") or a kubeconfig's file name ("admin.conf").
	Name string
	// Kubeconfig says Name is a kubeconfig below the configuration directory.
	Kubeconfig bool
	// CA names the signing CA.
	CA string
	// Users are the static pods that load it, restarted after a renewal.
	Users []string
}

// Kubeconfigs are the kubeconfigs renewed: kubelet.conf is not, as the
// kubelet rotates its client certificate itself, and bootstrap-kubelet.conf
// holds a token.
var Kubeconfigs = []string{"admin.conf", "super-admin.conf", "controller-manager.conf", "scheduler.conf", "vip-manager.conf", "cloud-controller-manager.conf"}

// users maps each certificate or kubeconfig to the static pods that load it;
// one missing here (admin.conf, etcd/healthcheck-client) is read only by
// clients that start afresh each time.
var users = map[string][]string{
	"apiserver":                     {staticpod.APIServer},
	"apiserver-kubelet-client":      {staticpod.APIServer},
	"apiserver-etcd-client":         {staticpod.APIServer},
	"front-proxy-client":            {staticpod.APIServer},
	"etcd/server":                   {staticpod.Etcd},
	"etcd/peer":                     {staticpod.Etcd},
	"controller-manager.conf":       {staticpod.ControllerManager},
	"scheduler.conf":                {staticpod.Scheduler},
	"vip-manager.conf":              {staticpod.VIPManager},
	"cloud-controller-manager.conf": {staticpod.CloudControllerManager},
}

// Targets lists every renewable certificate of specs (the CAs are not) and
// the renewable kubeconfigs, in the order `certs check-expiration` prints them.
func Targets(specs []pki.Spec) []Target {
	var out []Target
	for _, s := range specs {
		if !s.IsCA() {
			out = append(out, Target{Name: s.Name, CA: s.CA, Users: users[s.Name]})
		}
	}
	for _, k := range Kubeconfigs {
		out = append(out, Target{Name: k, Kubeconfig: true, CA: pki.CA, Users: users[k]})
	}
	return out
}

// Select returns the targets named (all of them for "all"), or an error
// listing the valid names.
func Select(targets []Target, name string) ([]Target, error) {
	if name == "all" {
		return targets, nil
	}
	var names []string
	for _, t := range targets {
		if t.Name == name {
			return []Target{t}, nil
		}
		names = append(names, t.Name)
	}
	return nil, fmt.Errorf("unknown certificate %q: want all or one of %v", name, names)
}

// ErrMissing is returned by Renew when the certificate or kubeconfig is not
// on this node (an etcd certificate with external etcd, vip-manager.conf
// without a virtual IP).
var ErrMissing = errors.New("not on this node")

// Dirs are where the files are.
type Dirs struct {
	// PKI is the certificates directory, Config the kubeconfigs' directory.
	PKI, Config string
}

// Renew issues t anew with its CA, keeping its subject, SANs and usages, and
// returns when the new certificate expires. The CA's key must be on this
// node; the error says what to do where it is not.
func Renew(d Dirs, t Target, now time.Time) (time.Time, error) {
	path := pki.CertPath(d.PKI, t.Name)
	if t.Kubeconfig {
		path = filepath.Join(d.Config, t.Name)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return time.Time{}, fmt.Errorf("%s: %w", path, ErrMissing)
	}
	ca, err := LoadCA(d.PKI, t.CA)
	if err != nil {
		return time.Time{}, err
	}
	if t.Kubeconfig {
		return renewKubeconfig(path, ca, now)
	}
	old, err := pki.Load(d.PKI, t.Name)
	if err != nil {
		return time.Time{}, fmt.Errorf("renew %s: %w", t.Name, err)
	}
	kp, err := pki.Issue(specOf(t.Name, t.CA, old.Cert), ca, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("renew %s: %w", t.Name, err)
	}
	if err := pki.Write(d.PKI, t.Name, kp); err != nil {
		return time.Time{}, fmt.Errorf("renew %s: %w", t.Name, err)
	}
	return kp.Cert.NotAfter, nil
}

// LoadCA loads CA name with its key; a missing key is an error saying what
// to do, as a node may hold only the CA's certificate (a worker, or a
// cluster whose CA is external).
func LoadCA(dir, name string) (*pki.KeyPair, error) {
	keyPath := pki.KeyPath(dir, name)
	if _, err := os.Stat(keyPath); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the %s CA's key %s is not on this node, so its certificates cannot be renewed here: "+
			"run `triremeadm certs renew` on a control-plane node that holds it (one that ran init, or joined with --control-plane --certificate-key), "+
			"or copy %s there (mode 0600) and run it again; with an external CA, sign new certificates for the same names (`openssl x509 -in %s -noout -text` shows the subject and SANs) and put them in place",
			name, keyPath, keyPath, pki.CertPath(dir, "apiserver"))
	}
	ca, err := pki.Load(dir, name)
	if err != nil {
		return nil, fmt.Errorf("the %s CA: %w", name, err)
	}
	if !ca.Cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", pki.CertPath(dir, name))
	}
	return ca, nil
}

// specOf is the spec that reissues old: its subject, SANs and usages.
func specOf(name, ca string, c *x509.Certificate) pki.Spec {
	return pki.Spec{Name: name, CA: ca, CommonName: c.Subject.CommonName, Organization: slices.Clone(c.Subject.Organization),
		Usages: slices.Clone(c.ExtKeyUsage), DNSNames: slices.Clone(c.DNSNames), IPs: slices.Clone(c.IPAddresses)}
}

// renewKubeconfig replaces the client certificate and key of the current
// user of the kubeconfig at path; its server and CA stay.
func renewKubeconfig(path string, ca *pki.KeyPair, now time.Time) (time.Time, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("renew %s: %w", path, err)
	}
	c, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.AuthInfos[c.AuthInfo] == nil {
		return time.Time{}, fmt.Errorf("renew %s: no current user", path)
	}
	user := cfg.AuthInfos[c.AuthInfo]
	cert, err := pki.ParseCert(user.ClientCertificateData)
	if err != nil {
		return time.Time{}, fmt.Errorf("renew %s: its client certificate: %w", path, err)
	}
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
		return time.Time{}, fmt.Errorf("renew %s: its client certificate is not signed by the cluster CA: %w", path, err)
	}
	kp, err := pki.Issue(specOf(filepath.Base(path), pki.CA, cert), ca, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("renew %s: %w", path, err)
	}
	keyPEM, err := pki.EncodeKey(kp.Key)
	if err != nil {
		return time.Time{}, err
	}
	user.ClientCertificateData, user.ClientKeyData = pki.EncodeCert(kp.Cert), keyPEM
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return time.Time{}, err
	}
	if err := pki.WriteFile(path, data, 0o600); err != nil {
		return time.Time{}, err
	}
	return kp.Cert.NotAfter, nil
}
