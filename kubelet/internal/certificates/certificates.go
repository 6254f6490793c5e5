// Package certificates is the kubelet's TLS bootstrap and its certificate
// managers: a bootstrap-token kubeconfig buys a client certificate through a
// kubernetes.io/kube-apiserver-client-kubelet CSR, written to the cert
// directory and referenced from --kubeconfig; with rotateCertificates the
// client certificate is renewed before it expires, and with
// serverTLSBootstrap the node server's certificate comes from a
// kubernetes.io/kubelet-serving CSR. Requesting, waiting, storing and
// rotating use client-go's util/certificate as upstream's kubelet does.
package certificates

import (
	"context"
	"crypto"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

const (
	// ClientPairName names the client certificate files in the cert
	// directory (kubelet-client-current.pem and its dated versions).
	ClientPairName = "kubelet-client"
	// ServerPairName names the serving certificate files.
	ServerPairName = "kubelet-server"
	// NodesGroup is the group every node's certificate carries.
	NodesGroup = "system:nodes"
	// NodeUserPrefix prefixes a node's user name.
	NodeUserPrefix = "system:node:"
)

// ClientUsages are the key usages of a kubelet client certificate with an
// ECDSA key (the kind client-go's manager generates).
var ClientUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

// ServingUsages are the key usages of a kubelet serving certificate.
var ServingUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}

// ClientSubject is the subject of nodeName's client certificate.
func ClientSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: NodeUserPrefix + nodeName, Organization: []string{NodesGroup}}
}

// Bootstrap makes sure kubeconfigPath holds credentials that can be used:
// when it is missing or its client certificate has expired and a bootstrap
// kubeconfig is given, a CSR for nodeName is created with the bootstrap
// credentials, approved and signed by the controller-manager, stored in
// certDir and referenced from a newly written kubeconfigPath. A valid
// certificate already in certDir (from an earlier run) is reused.
func Bootstrap(ctx context.Context, kubeconfigPath, bootstrapPath, certDir, nodeName string, timeout time.Duration, log logr.Logger) error {
	if ok, reason := usableKubeconfig(kubeconfigPath); ok {
		log.V(2).Info("Using the existing kubeconfig", "kubeconfig", kubeconfigPath)
		return nil
	} else if bootstrapPath == "" {
		return fmt.Errorf("kubeconfig %s cannot be used (%s) and no --bootstrap-kubeconfig is given", kubeconfigPath, reason)
	} else {
		log.Info("Bootstrapping client credentials", "kubeconfig", kubeconfigPath, "reason", reason, "bootstrapKubeconfig", bootstrapPath)
	}
	bootCfg, err := clientcmd.BuildConfigFromFlags("", bootstrapPath)
	if err != nil {
		return fmt.Errorf("load bootstrap kubeconfig: %w", err)
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("cert dir: %w", err)
	}
	store, err := certificate.NewFileStore(ClientPairName, certDir, certDir, "", "")
	if err != nil {
		return fmt.Errorf("client certificate store: %w", err)
	}
	if cert, err := store.Current(); err == nil && certValid(cert.Leaf, time.Now()) {
		log.Info("Reusing the client certificate in the cert dir", "path", store.CurrentPath())
		return WriteKubeconfig(kubeconfigPath, bootCfg, store.CurrentPath())
	}

	client, err := kubernetes.NewForConfig(bootCfg)
	if err != nil {
		return fmt.Errorf("bootstrap client: %w", err)
	}
	certPath, err := requestClientCertificate(ctx, client, store, certDir, nodeName, timeout, log)
	if err != nil {
		return err
	}
	return WriteKubeconfig(kubeconfigPath, bootCfg, certPath)
}

// requestClientCertificate asks for nodeName's client certificate with
// client, waits until it is issued, stores it and returns the store's
// current path.
func requestClientCertificate(ctx context.Context, client kubernetes.Interface, store certificate.FileStore, certDir, nodeName string, timeout time.Duration, log logr.Logger) (string, error) {
	// The key survives a restart in the middle of bootstrap, so the same
	// request can be picked up again.
	keyPath := filepath.Join(certDir, ClientPairName+".key.tmp")
	keyPEM, _, err := keyutil.LoadOrGenerateKeyFile(keyPath)
	if err != nil {
		return "", fmt.Errorf("bootstrap key: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return "", fmt.Errorf("bootstrap key: %w", err)
	}
	subject := ClientSubject(nodeName)
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return "", fmt.Errorf("make csr: %w", err)
	}
	reqName, reqUID, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, requestName(key, subject), certificatesv1.KubeAPIServerClientKubeletSignerName, nil, ClientUsages, key)
	if err != nil {
		return "", fmt.Errorf("request client certificate: %w", err)
	}
	log.Info("Waiting for the client certificate", "csr", reqName)
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(wctx, client, reqName, reqUID)
	if err != nil {
		return "", fmt.Errorf("wait for csr %s: %w", reqName, err)
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return "", fmt.Errorf("store client certificate: %w", err)
	}
	if err := os.Remove(keyPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Error(err, "Remove the bootstrap key", "path", keyPath)
	}
	log.Info("Obtained a client certificate", "csr", reqName, "path", store.CurrentPath())
	return store.CurrentPath(), nil
}

// requestName names the bootstrap CSR after its key and subject, as
// upstream does, so a kubelet restarted while waiting finds its request
// again instead of filing another. Hex keeps the name a valid DNS
// subdomain for apiservers that validate CSR names that strictly.
func requestName(key any, subject pkix.Name) string {
	h := sha512.New512_256()
	if signer, ok := key.(crypto.Signer); ok {
		if der, err := x509.MarshalPKIXPublicKey(signer.Public()); err == nil {
			h.Write(der)
		}
	}
	h.Write([]byte(subject.CommonName))
	for _, o := range subject.Organization {
		h.Write([]byte{0})
		h.Write([]byte(o))
	}
	return "node-csr-" + hex.EncodeToString(h.Sum(nil))
}

// usableKubeconfig reports whether path loads and, if it authenticates
// with a client certificate, whether that certificate is still valid.
func usableKubeconfig(path string) (bool, string) {
	if _, err := os.Stat(path); err != nil {
		return false, "it does not exist"
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return false, err.Error()
	}
	if cfg.CertFile == "" && len(cfg.CertData) == 0 {
		return true, ""
	}
	certPEM := cfg.CertData
	if cfg.CertFile != "" {
		if certPEM, err = os.ReadFile(cfg.CertFile); err != nil {
			return false, err.Error()
		}
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil || len(certs) == 0 {
		return false, "its client certificate does not parse"
	}
	if !certValid(certs[0], time.Now()) {
		return false, "its client certificate has expired"
	}
	return true, ""
}

func certValid(c *x509.Certificate, now time.Time) bool {
	return c != nil && now.After(c.NotBefore) && now.Before(c.NotAfter)
}

// WriteKubeconfig writes a kubeconfig for the server and CA of from that
// authenticates with the certificate and key in pairFile (which the
// certificate store keeps pointing at the newest pair).
func WriteKubeconfig(path string, from *rest.Config, pairFile string) error {
	caData := from.CAData
	if from.CAFile != "" {
		b, err := os.ReadFile(from.CAFile)
		if err != nil {
			return fmt.Errorf("read bootstrap CA: %w", err)
		}
		caData = b
	}
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"default-cluster": {
			Server: from.Host, CertificateAuthorityData: caData,
			InsecureSkipTLSVerify: from.Insecure, TLSServerName: from.ServerName,
		}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pairFile, ClientKey: pairFile}},
		Contexts:       map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}},
		CurrentContext: "default-context",
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// NewClientManager returns a manager that renews the client certificate
// in certDir with a kube-apiserver-client-kubelet CSR when 70-90% of its
// life has passed, authenticating with the current certificate (the
// kubeconfig at kubeconfigPath, which names the store's current file; the
// apiserver clients reload it).
func NewClientManager(kubeconfigPath, certDir, nodeName string) (certificate.Manager, error) {
	store, err := certificate.NewFileStore(ClientPairName, certDir, certDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("client certificate store: %w", err)
	}
	subject := ClientSubject(nodeName)
	return certificate.NewManager(&certificate.Config{
		Name: "client",
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) {
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
			if err != nil {
				return nil, err
			}
			return kubernetes.NewForConfig(cfg)
		},
		Template:         &x509.CertificateRequest{Subject: subject},
		SignerName:       certificatesv1.KubeAPIServerClientKubeletSignerName,
		Usages:           ClientUsages,
		CertificateStore: store,
	})
}

// NewServingManager returns a manager that keeps the node server's
// certificate in certDir signed through kubelet-serving CSRs whose names
// are hostnames and addresses (the Node's addresses, which the approver
// checks), re-requested when they change.
func NewServingManager(client kubernetes.Interface, certDir, nodeName string, addresses func() (hostnames []string, ips []net.IP)) (certificate.Manager, error) {
	store, err := certificate.NewFileStore(ServerPairName, certDir, certDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("serving certificate store: %w", err)
	}
	return certificate.NewManager(&certificate.Config{
		Name:        "server",
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		GetTemplate: func() *x509.CertificateRequest {
			hosts, ips := addresses()
			if len(hosts) == 0 && len(ips) == 0 {
				return nil // nothing to ask for until the Node has addresses
			}
			return &x509.CertificateRequest{Subject: ClientSubject(nodeName), DNSNames: hosts, IPAddresses: ips}
		},
		SignerName:       certificatesv1.KubeletServingSignerName,
		Usages:           ServingUsages,
		CertificateStore: store,
	})
}
