package kubeconfig

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/adm/internal/pki"
)

func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if _, err := pki.Ensure(dir, pki.Spec{Name: pki.CA, CommonName: "kubernetes"}, now); err != nil {
		t.Fatal(err)
	}
	ca, _ := pki.Load(dir, pki.CA)
	in := Inputs{ClusterName: "trireme", NodeName: "cp-1", ControlPlaneURL: "https://lb:6443", LocalURL: "https://10.0.0.2:6443"}
	want := map[string]struct{ user, group, server string }{
		"admin.conf":              {"kubernetes-admin", "kubeadm:cluster-admins", "https://lb:6443"},
		"super-admin.conf":        {"kubernetes-super-admin", "system:masters", "https://lb:6443"},
		"controller-manager.conf": {"system:kube-controller-manager", "", "https://10.0.0.2:6443"},
		"scheduler.conf":          {"system:kube-scheduler", "", "https://10.0.0.2:6443"},
		"kubelet.conf":            {"system:node:cp-1", "system:nodes", "https://lb:6443"},
	}
	for _, s := range Specs(in) {
		path := dir + "/" + s.File
		if a, err := Ensure(path, "trireme", s, ca, now); err != nil || a != pki.Generated {
			t.Fatalf("Ensure %s = %v %v", s.File, a, err)
		}
		cert, err := ClientCert(path)
		if err != nil {
			t.Fatal(err)
		}
		w := want[s.File]
		if cert.Subject.CommonName != w.user || (w.group != "" && !slices.Equal(cert.Subject.Organization, []string{w.group})) {
			t.Errorf("%s: subject %v", s.File, cert.Subject)
		}
		cfg, _ := clientcmd.LoadFromFile(path)
		if cfg.Clusters["trireme"].Server != w.server || cfg.CurrentContext != w.user+"@trireme" {
			t.Errorf("%s: server %s context %s", s.File, cfg.Clusters["trireme"].Server, cfg.CurrentContext)
		}
		if a, err := Ensure(path, "trireme", s, ca, now); err != nil || a != pki.Reused {
			t.Errorf("second Ensure %s = %v %v", s.File, a, err)
		}
	}
	// Another server makes the existing file unusable.
	s := Specs(in)[0]
	s.Server = "https://other:6443"
	if _, err := Ensure(dir+"/admin.conf", "trireme", s, ca, now); err == nil || !strings.Contains(err.Error(), "server https://lb:6443") {
		t.Errorf("changed server: %v", err)
	}
	// Another CA too.
	other := t.TempDir()
	pki.Ensure(other, pki.Spec{Name: pki.CA, CommonName: "kubernetes"}, now)
	ca2, _ := pki.Load(other, pki.CA)
	if _, err := Ensure(dir+"/admin.conf", "trireme", Specs(in)[0], ca2, now); err == nil || !strings.Contains(err.Error(), "another CA") {
		t.Errorf("changed CA: %v", err)
	}
}

// TestClientCertFromFile: a bootstrapped kubelet's kubeconfig names its
// rotating certificate file (certificate and key in one PEM) instead of
// embedding it.
func TestClientCertFromFile(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if _, err := pki.Ensure(dir, pki.Spec{Name: pki.CA, CommonName: "kubernetes"}, now); err != nil {
		t.Fatal(err)
	}
	ca, _ := pki.Load(dir, pki.CA)
	in := Inputs{ClusterName: "trireme", NodeName: "w1", ControlPlaneURL: "https://lb:6443"}
	var spec Spec
	for _, s := range Specs(in) {
		if s.File == "kubelet.conf" {
			spec = s
		}
	}
	embedded := dir + "/embedded.conf"
	if _, err := Ensure(embedded, "trireme", spec, ca, now); err != nil {
		t.Fatal(err)
	}
	cfg, _ := clientcmd.LoadFromFile(embedded)
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	pair := dir + "/kubelet-client-current.pem"
	if err := os.WriteFile(pair, append(user.ClientKeyData, user.ClientCertificateData...), 0o600); err != nil {
		t.Fatal(err)
	}
	user.ClientCertificateData, user.ClientKeyData = nil, nil
	user.ClientCertificate, user.ClientKey = pair, pair
	byFile := dir + "/kubelet.conf"
	if err := clientcmd.WriteToFile(*cfg, byFile); err != nil {
		t.Fatal(err)
	}
	cert, err := ClientCert(byFile)
	if err != nil || cert.Subject.CommonName != "system:node:w1" {
		t.Fatalf("ClientCert = %v, %v", cert, err)
	}
	os.Remove(pair)
	if _, err := ClientCert(byFile); err == nil || !strings.Contains(err.Error(), "kubelet-client-current.pem") {
		t.Errorf("a missing certificate file: %v", err)
	}
}
