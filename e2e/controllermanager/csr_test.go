package controllermanager_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testpki"

	"trireme.dev/componentbase/testwait"
)

// The bootstrap token the joining "kubelet" presents, as kubeadm makes it.
const (
	tokenID     = "abcdef"
	tokenSecret = "0123456789abcdef"
	tokenGroup  = "system:bootstrappers:kubeadm:default-node-token"
)

// kubeadmBindings are the bindings kubeadm init creates so that bootstrap
// tokens may ask for node client certificates and nodes may renew theirs.
func kubeadmBindings() []*rbacv1.ClusterRoleBinding {
	bind := func(name, role, group string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: group}},
		}
	}
	return []*rbacv1.ClusterRoleBinding{
		bind("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", tokenGroup),
		bind("kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", tokenGroup),
		bind("kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
	}
}

// makeCSR submits a CSR for a fresh key asking for want's subject and
// names, and returns the key's PEM.
func makeCSR(t *testing.T, cs kubernetes.Interface, name, signer string, want testpki.Cert, usages []certificatesv1.KeyUsage) []byte {
	t.Helper()
	req := testpki.NewRequest(want)
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           req.PEM,
			SignerName:        signer,
			Usages:            usages,
			ExpirationSeconds: ptr.To[int32](3600),
		},
	}
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Create(context.Background(), csr, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create csr %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return req.KeyPEM
}

// issued waits for the CSR's certificate and checks it was auto-approved.
func issued(t *testing.T, cs kubernetes.Interface, name string) *x509.Certificate {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	testwait.For(t, nodesTestTimeout, "certificate of csr "+name, func(ctx context.Context) (bool, error) {
		var err error
		csr, err = cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		return err == nil && len(csr.Status.Certificate) > 0, err
	})
	approved := slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved && c.Reason == "AutoApproved"
	})
	if !approved {
		t.Errorf("csr %s conditions %+v: want Approved/AutoApproved", name, csr.Status.Conditions)
	}
	block, _ := pem.Decode(csr.Status.Certificate)
	if block == nil {
		t.Fatalf("csr %s certificate is not PEM", name)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(cert.NotAfter); left > time.Hour || left < 55*time.Minute {
		t.Errorf("csr %s certificate valid for %s more, want the 1h expirationSeconds asked for", name, left)
	}
	return cert
}

func testCSR(t *testing.T, srv *testcluster.APIServer, admin kubernetes.Interface) {
	ctx := context.Background()
	for _, b := range kubeadmBindings() {
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create binding %s: %v", b.Name, err)
		}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + tokenID, Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": tokenID, "token-secret": tokenSecret,
			"usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
			"auth-extra-groups": tokenGroup,
			"expiration":        time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}
	if _, err := admin.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create bootstrap token: %v", err)
	}
	base := srv.Config()
	anonymous := rest.AnonymousClientConfig(base)
	withToken := rest.CopyConfig(anonymous)
	withToken.BearerToken = tokenID + "." + tokenSecret
	boot := kubernetes.NewForConfigOrDie(withToken)

	const nodeName = "csr-node"
	clientUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	// nodeCert is what the node asks for: its subject, with names for a
	// serving certificate.
	nodeCert := func(dns []string, ips []net.IP) testpki.Cert {
		return testpki.Cert{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}, DNSNames: dns, IPs: ips}
	}
	keyPEM := makeCSR(t, boot, "node-csr-bootstrap", certificatesv1.KubeAPIServerClientKubeletSignerName, nodeCert(nil, nil), clientUsages)
	cert := issued(t, admin, "node-csr-bootstrap")

	nodeCfg := rest.CopyConfig(anonymous)
	nodeCfg.CertData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	nodeCfg.KeyData = keyPEM
	node := kubernetes.NewForConfigOrDie(nodeCfg)
	review, err := node.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("self subject review with the issued certificate: %v", err)
	}
	if u := review.Status.UserInfo; u.Username != "system:node:"+nodeName || !slices.Contains(u.Groups, "system:nodes") {
		t.Errorf("issued certificate authenticates as %q %v, want system:node:%s in system:nodes", u.Username, u.Groups, nodeName)
	}

	// Renewal by the node itself, then its serving certificate once its
	// Node lists the names asked for.
	makeCSR(t, node, "node-csr-renewal", certificatesv1.KubeAPIServerClientKubeletSignerName, nodeCert(nil, nil), clientUsages)
	issued(t, admin, "node-csr-renewal")

	makeNode(t, admin, nodeName, nil)
	servingUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	makeCSR(t, node, "node-csr-serving", certificatesv1.KubeletServingSignerName, nodeCert([]string{nodeName}, []net.IP{net.ParseIP("10.1.2.3")}), servingUsages)
	serving := issued(t, admin, "node-csr-serving")
	if !slices.Equal(serving.DNSNames, []string{nodeName}) || len(serving.IPAddresses) != 1 {
		t.Errorf("serving certificate names %v %v", serving.DNSNames, serving.IPAddresses)
	}
	// A serving CSR naming an address the Node does not have is left to
	// an administrator.
	makeCSR(t, node, "node-csr-serving-foreign", certificatesv1.KubeletServingSignerName, nodeCert([]string{"elsewhere.example"}, nil), servingUsages)
	time.Sleep(time.Second)
	foreign, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "node-csr-serving-foreign", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(foreign.Status.Conditions) != 0 || len(foreign.Status.Certificate) != 0 {
		t.Errorf("serving csr for a foreign name got %+v", foreign.Status.Conditions)
	}
}
