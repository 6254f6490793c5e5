// Package kubeconfig writes the cluster's kubeconfig files — admin.conf,
// super-admin.conf, controller-manager.conf, scheduler.conf and kubelet.conf — each
// with an embedded client certificate signed by the cluster CA, as kubeadm does.
package kubeconfig

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"trireme.dev/adm/internal/pki"
)

// Spec is one kubeconfig file and the identity in it.
type Spec struct {
	// File is the file name below the configuration directory, e.g. "admin.conf".
	File string
	// User is the certificate's common name (the user name).
	User string
	// Groups are the certificate's organizations (the groups).
	Groups []string
	// Server is the apiserver URL.
	Server string
}

// Inputs is what the kubeconfig files depend on.
type Inputs struct {
	// ClusterName names the cluster and contexts.
	ClusterName string
	// NodeName is this node's name, for kubelet.conf.
	NodeName string
	// ControlPlaneURL is the URL of --control-plane-endpoint or of this node's
	// apiserver when none is set.
	ControlPlaneURL string
	// LocalURL is this node's apiserver; the scheduler and controller-manager talk to
	// it directly.
	LocalURL string
	// VIPManager adds vip-manager.conf, the virtual-IP manager's (local) kubeconfig.
	VIPManager bool
	// CloudControllerManager adds cloud-controller-manager.conf, the
	// cloud-controller-manager's (local) kubeconfig.
	CloudControllerManager bool
}

// CloudControllerManagerUser is the cloud-controller-manager's user name,
// which upstream's RBAC for it binds.
const CloudControllerManagerUser = "system:cloud-controller-manager"

// CloudControllerManagerKubeconfig is its kubeconfig file.
const CloudControllerManagerKubeconfig = "cloud-controller-manager.conf"

// VIPManagerUser is the virtual-IP manager's user name.
const VIPManagerUser = "system:trireme-vip-manager"

// Specs lists the control-plane node's kubeconfig files.
func Specs(in Inputs) []Spec {
	specs := []Spec{
		{File: "admin.conf", User: "kubernetes-admin", Groups: []string{pki.ClusterAdminsGroup}, Server: in.ControlPlaneURL},
		{File: "super-admin.conf", User: "kubernetes-super-admin", Groups: []string{"system:masters"}, Server: in.ControlPlaneURL},
		{File: "controller-manager.conf", User: "system:kube-controller-manager", Server: in.LocalURL},
		{File: "scheduler.conf", User: "system:kube-scheduler", Server: in.LocalURL},
		{File: "kubelet.conf", User: "system:node:" + in.NodeName, Groups: []string{"system:nodes"}, Server: in.ControlPlaneURL},
	}
	if in.VIPManager {
		specs = append(specs, Spec{File: "vip-manager.conf", User: VIPManagerUser, Server: in.LocalURL})
	}
	if in.CloudControllerManager {
		specs = append(specs, Spec{File: CloudControllerManagerKubeconfig, User: CloudControllerManagerUser, Server: in.LocalURL})
	}
	return specs
}

// Ensure writes path for spec with a new client certificate signed by ca, or reuses
// the file when it already points at the same server, trusts the same CA and holds a
// valid certificate for the same user.
func Ensure(path, clusterName string, spec Spec, ca *pki.KeyPair, now time.Time) (pki.Action, error) {
	if _, err := os.Stat(path); err == nil {
		if err := check(path, spec, ca, now); err != nil {
			return "", fmt.Errorf("existing %s is not usable (remove it to regenerate): %w", path, err)
		}
		return pki.Reused, nil
	}
	kp, err := pki.Issue(pki.Spec{Name: spec.File, CA: pki.CA, CommonName: spec.User, Organization: spec.Groups,
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, now)
	if err != nil {
		return "", err
	}
	keyPEM, err := pki.EncodeKey(kp.Key)
	if err != nil {
		return "", err
	}
	cfg := New(clusterName, spec.Server, pki.EncodeCert(ca.Cert), spec.User, pki.EncodeCert(kp.Cert), keyPEM)
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	if err := pki.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return pki.Generated, nil
}

// New builds a one-context kubeconfig for user with a client certificate.
func New(clusterName, server string, caPEM []byte, user string, certPEM, keyPEM []byte) *clientcmdapi.Config {
	ctx := user + "@" + clusterName
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[ctx] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	cfg.CurrentContext = ctx
	return cfg
}

func check(path string, spec Spec, ca *pki.KeyPair, now time.Time) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return err
	}
	c, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return fmt.Errorf("no current context")
	}
	cluster, user := cfg.Clusters[c.Cluster], cfg.AuthInfos[c.AuthInfo]
	if cluster == nil || user == nil {
		return fmt.Errorf("current context names a missing cluster or user")
	}
	if cluster.Server != spec.Server {
		return fmt.Errorf("server %s, want %s", cluster.Server, spec.Server)
	}
	if !bytes.Equal(bytes.TrimSpace(cluster.CertificateAuthorityData), bytes.TrimSpace(pki.EncodeCert(ca.Cert))) {
		return fmt.Errorf("trusts another CA than %s", pki.CertPath("", pki.CA))
	}
	cert, err := pki.ParseCert(user.ClientCertificateData)
	if err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
		return fmt.Errorf("client certificate not signed by the cluster CA: %w", err)
	}
	if now.After(cert.NotAfter) {
		return fmt.Errorf("client certificate expired on %s", cert.NotAfter.Format(time.RFC3339))
	}
	if cert.Subject.CommonName != spec.User {
		return fmt.Errorf("user %q, want %q", cert.Subject.CommonName, spec.User)
	}
	return nil
}

// ClientCert returns the client certificate of the kubeconfig at path:
// embedded, or in the file it names (a bootstrapped kubelet's rotating
// kubelet-client-current.pem, which also holds the key).
func ClientCert(path string) (*x509.Certificate, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, err
	}
	c, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.AuthInfos[c.AuthInfo] == nil {
		return nil, fmt.Errorf("%s: no current user", path)
	}
	user := cfg.AuthInfos[c.AuthInfo]
	if len(user.ClientCertificateData) > 0 || user.ClientCertificate == "" {
		return pki.ParseCert(user.ClientCertificateData)
	}
	data, err := os.ReadFile(user.ClientCertificate)
	if err != nil {
		return nil, fmt.Errorf("%s: client certificate: %w", path, err)
	}
	return pki.ParseCert(data)
}
