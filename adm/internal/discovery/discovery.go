// Package discovery finds and trusts a cluster for `triremeadm join` as kubeadm's
// token discovery does: it reads kube-public/cluster-info without credentials,
// checks the bootstrap token's JWS signature over it (the bootstrapsigner
// controller adds one per token), pins the CA it names to a
// --discovery-token-ca-cert-hash, and then reads it again over TLS verified by
// that CA.
package discovery

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
)

// Result is what discovery learnt: the apiserver's URL and the cluster CA.
type Result struct {
	// Server is the apiserver URL cluster-info names.
	Server string
	// CAPEM and CA are the cluster CA certificate, PEM-encoded and parsed.
	CAPEM []byte
	CA    *x509.Certificate
}

// CAHash is the --discovery-token-ca-cert-hash of a CA certificate.
func CAHash(ca *x509.Certificate) string {
	sum := sha256.Sum256(ca.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Verify checks cluster-info's data against the token (its JWS signature) and the
// pinned CA hashes (none with skipCAVerification), and returns its cluster.
func Verify(data map[string]string, token string, hashes []string, skipCAVerification bool) (*Result, error) {
	id, secret, ok := strings.Cut(token, ".")
	if !ok {
		return nil, fmt.Errorf("token %q is not <id>.<secret>", token)
	}
	content, ok := data[bootstrapapi.KubeConfigKey]
	if !ok {
		return nil, fmt.Errorf("cluster-info has no %s", bootstrapapi.KubeConfigKey)
	}
	sig, ok := data[bootstrapapi.JWSSignatureKeyPrefix+id]
	if !ok {
		return nil, fmt.Errorf("cluster-info is not signed for token %s yet", id)
	}
	if !jws.DetachedTokenIsValid(sig, content, id, secret) {
		return nil, fmt.Errorf("cluster-info's signature for token %s does not match the token", id)
	}
	cfg, err := clientcmd.Load([]byte(content))
	if err != nil {
		return nil, fmt.Errorf("cluster-info kubeconfig: %w", err)
	}
	var cluster *clientcmdapi.Cluster
	for _, c := range cfg.Clusters {
		cluster = c
	}
	if cluster == nil {
		return nil, errors.New("cluster-info names no cluster")
	}
	block, _ := pem.Decode(cluster.CertificateAuthorityData)
	if block == nil {
		return nil, errors.New("cluster-info has no CA certificate")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cluster-info CA: %w", err)
	}
	if !skipCAVerification {
		got := CAHash(ca)
		pinned := false
		for _, h := range hashes {
			if strings.EqualFold(h, got) {
				pinned = true
			}
		}
		if !pinned {
			return nil, fmt.Errorf("the cluster CA's hash %s matches none of %v", got, hashes)
		}
	}
	return &Result{Server: cluster.Server, CAPEM: cluster.CertificateAuthorityData, CA: ca}, nil
}

// Discover reads cluster-info from endpoint (host:port) until it verifies or
// timeout passes, then reads it again trusting only the discovered CA.
func Discover(ctx context.Context, endpoint, token string, hashes []string, skipCAVerification bool, timeout time.Duration) (*Result, error) {
	if len(hashes) == 0 && !skipCAVerification {
		return nil, errors.New("give --discovery-token-ca-cert-hash (or --discovery-token-unsafe-skip-ca-verification)")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	insecure := &rest.Config{Host: "https://" + endpoint, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 10 * time.Second}
	var last error
	for {
		res, err := fetch(ctx, insecure, token, hashes, skipCAVerification)
		if err == nil {
			secure := &rest.Config{Host: "https://" + endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: res.CAPEM}, Timeout: 10 * time.Second}
			if _, err = fetch(ctx, secure, token, hashes, skipCAVerification); err == nil {
				return res, nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("discovery through %s: %w", endpoint, last)
		case <-time.After(2 * time.Second):
		}
	}
}

func fetch(ctx context.Context, rc *rest.Config, token string, hashes []string, skip bool) (*Result, error) {
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	cm, err := c.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read kube-public/%s: %w", bootstrapapi.ConfigMapClusterInfo, err)
	}
	return Verify(cm.Data, token, hashes, skip)
}
