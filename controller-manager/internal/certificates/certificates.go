// Package certificates holds what the CSR approving and signing
// controllers share: parsing a CertificateSigningRequest and checking that
// it is what the kubelet client and serving signers may issue.
package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// NodeUserPrefix starts a kubelet's user name; NodesGroup is its group.
const (
	NodeUserPrefix = "system:node:"
	NodesGroup     = "system:nodes"
)

// ParseRequest decodes the PEM CERTIFICATE REQUEST of csr and checks its
// signature.
func ParseRequest(csr *certificatesv1.CertificateSigningRequest) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("spec.request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse spec.request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("spec.request signature: %w", err)
	}
	return req, nil
}

// Approved and Denied report the CSR's approval conditions.
func Approved(csr *certificatesv1.CertificateSigningRequest) bool {
	return hasCondition(csr, certificatesv1.CertificateApproved)
}

// Denied reports whether the CSR was denied.
func Denied(csr *certificatesv1.CertificateSigningRequest) bool {
	return hasCondition(csr, certificatesv1.CertificateDenied)
}

// Failed reports whether signing the CSR failed for good.
func Failed(csr *certificatesv1.CertificateSigningRequest) bool {
	return hasCondition(csr, certificatesv1.CertificateFailed)
}

func hasCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status != corev1.ConditionFalse {
			return true
		}
	}
	return false
}

// usagesIn reports whether every usage is one of allowed and every one of
// required is present.
func usagesIn(usages []certificatesv1.KeyUsage, required, allowed []certificatesv1.KeyUsage) error {
	for _, u := range required {
		if !slices.Contains(usages, u) {
			return fmt.Errorf("usages %v lack %q", usages, u)
		}
	}
	for _, u := range usages {
		if !slices.Contains(allowed, u) {
			return fmt.Errorf("usage %q not allowed; allowed: %v", u, allowed)
		}
	}
	return nil
}

var (
	kubeletClientUsages  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	kubeletServingUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth}
)

// nodeSubject checks the subject a kubelet certificate must have:
// organization exactly system:nodes and a system:node:<name> common name.
func nodeSubject(req *x509.CertificateRequest) error {
	if !slices.Equal(req.Subject.Organization, []string{NodesGroup}) {
		return fmt.Errorf("subject organization %v, want [%s]", req.Subject.Organization, NodesGroup)
	}
	if !strings.HasPrefix(req.Subject.CommonName, NodeUserPrefix) || len(req.Subject.CommonName) == len(NodeUserPrefix) {
		return fmt.Errorf("subject common name %q does not start with %q", req.Subject.CommonName, NodeUserPrefix)
	}
	return nil
}

// ValidateKubeletClient checks a kubernetes.io/kube-apiserver-client-kubelet
// request: a node subject, no subject alternative names, and client auth
// with digital signature (key encipherment allowed).
func ValidateKubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if err := nodeSubject(req); err != nil {
		return err
	}
	if len(req.DNSNames) > 0 || len(req.EmailAddresses) > 0 || len(req.IPAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("a kubelet client certificate may not carry DNS names, emails, IPs or URIs")
	}
	return usagesIn(usages, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, kubeletClientUsages)
}

// ValidateKubeletServing checks a kubernetes.io/kubelet-serving request: a
// node subject, at least one DNS name or IP and no emails or URIs, and
// server auth with digital signature (key encipherment allowed).
func ValidateKubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if err := nodeSubject(req); err != nil {
		return err
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errors.New("a kubelet serving certificate needs at least one DNS name or IP address")
	}
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("a kubelet serving certificate may not carry emails or URIs")
	}
	return usagesIn(usages, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}, kubeletServingUsages)
}

// ValidateAPIServerClient checks a kubernetes.io/kube-apiserver-client
// request: client auth, never server auth.
func ValidateAPIServerClient(usages []certificatesv1.KeyUsage) error {
	if !slices.Contains(usages, certificatesv1.UsageClientAuth) {
		return errors.New("usages lack \"client auth\"")
	}
	if slices.Contains(usages, certificatesv1.UsageServerAuth) {
		return errors.New("usage \"server auth\" is not allowed for a client certificate")
	}
	return nil
}
