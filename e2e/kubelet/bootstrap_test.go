package kubelet_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// kubeletConfigYAML is the suite kubelet's configuration file: its
// serving certificate comes from the cluster, its client certificate is
// renewed, and these cgroup v1 machines are accepted. The eviction
// thresholds are low because the test machines' shared disks often have
// less free than upstream's defaults (10% nodefs, 15% imagefs) ask for,
// and a kubelet under DiskPressure rightly evicts the suite's pods.
const kubeletConfigYAML = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
serverTLSBootstrap: true
rotateCertificates: true
failCgroupV1: false
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
`

// setUpBootstrapToken creates a bootstrap token with the RBAC kubeadm
// gives it (create CSRs, have them auto-approved; nodes may renew their
// own) and writes a kubeconfig that presents it.
func setUpBootstrapToken(ctx context.Context, dir, server, caFile string) (string, error) {
	id, secret := randomToken(3), randomToken(8)
	suite.bootstrapToken = id
	_, err := suite.client.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       corev1.SecretType("bootstrap.kubernetes.io/token"),
		Data: map[string][]byte{
			"token-id":                       []byte(id),
			"token-secret":                   []byte(secret),
			"usage-bootstrap-authentication": []byte("true"),
			"expiration":                     []byte(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create bootstrap token: %w", err)
	}
	bindings := []struct{ name, role, group string }{
		{"e2e-kubelet-bootstrap", "system:node-bootstrapper", "system:bootstrappers"},
		{"e2e-kubelet-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", "system:bootstrappers"},
		{"e2e-kubelet-autoapprove-renewal", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"},
	}
	for _, b := range bindings {
		_, err := suite.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: b.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: b.group}},
		}, metav1.CreateOptions{})
		if err != nil {
			return "", fmt.Errorf("create clusterrolebinding %s: %w", b.name, err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: id + "." + secret}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "bootstrap"}
	cfg.CurrentContext = "c"
	path := filepath.Join(dir, "bootstrap-kubelet.kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// servingCertificate returns the certificate the node server presents,
// verified against the cluster CA for the address 127.0.0.1.
func servingCertificate() (*x509.Certificate, error) {
	pool, err := certutil.NewPool(suite.srv.CACertPath())
	if err != nil {
		return nil, err
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(suite.port)), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// TestTLSBootstrap: the suite's kubelet started with only a bootstrap
// token; it got a client certificate through an auto-approved CSR, wrote
// its kubeconfig, and serves with a certificate signed for its addresses.
func TestTLSBootstrap(t *testing.T) {
	ctx := context.Background()
	kc, err := clientcmd.LoadFromFile(suite.kubeconfig)
	if err != nil {
		t.Fatalf("the kubelet wrote no kubeconfig: %v", err)
	}
	auth := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
	wantPair := filepath.Join(suite.dir, "root", "pki", "kubelet-client-current.pem")
	if auth.ClientCertificate != wantPair || auth.ClientKey != wantPair || auth.Token != "" {
		t.Fatalf("kubeconfig credentials = cert %q key %q token %q; want the pair %s", auth.ClientCertificate, auth.ClientKey, auth.Token, wantPair)
	}
	pemData, err := os.ReadFile(wantPair)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(pemData)
	if err != nil {
		t.Fatal(err)
	}
	client := certs[0]
	if client.Subject.CommonName != "system:node:"+suite.nodeName || !slices.Equal(client.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("client certificate subject = %v", client.Subject)
	}
	pool, err := certutil.NewPool(suite.srv.CACertPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate not signed by the cluster CA for client auth: %v", err)
	}

	csrs, err := suite.client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var clientCSR, servingCSR bool
	for _, c := range csrs.Items {
		approved := slices.ContainsFunc(c.Status.Conditions, func(cond certificatesv1.CertificateSigningRequestCondition) bool {
			return cond.Type == certificatesv1.CertificateApproved && cond.Status == corev1.ConditionTrue
		})
		issued := approved && len(c.Status.Certificate) > 0
		switch {
		case c.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && c.Spec.Username == "system:bootstrap:"+suite.bootstrapToken:
			clientCSR = issued
		case c.Spec.SignerName == certificatesv1.KubeletServingSignerName && c.Spec.Username == "system:node:"+suite.nodeName:
			servingCSR = servingCSR || issued
		}
	}
	if !clientCSR || !servingCSR {
		t.Errorf("issued CSRs: client (by the bootstrap token) %v, serving (by the node) %v\n%s", clientCSR, servingCSR, dump(csrs.Items))
	}

	serving, err := servingCertificate()
	if err != nil {
		t.Fatalf("node server's certificate does not verify against the cluster CA for 127.0.0.1: %v", err)
	}
	if !slices.Contains(serving.DNSNames, suite.nodeName) {
		t.Errorf("serving certificate DNS names %v lack the node name", serving.DNSNames)
	}
	// The kubelet acts as its node with the bootstrapped certificate.
	if _, err := suite.client.CoordinationV1().Leases("kube-node-lease").Get(ctx, suite.nodeName, metav1.GetOptions{}); err != nil {
		t.Errorf("node lease: %v", err)
	}
}
