package validation

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits of PodCertificateRequests, upstream's.
const (
	// pcrMinLifetime is the shortest certificate a request may ask for.
	pcrMinLifetime = 3600
	// pcrMaxLifetime is the longest (91 days); kubernetes.io signers give
	// a day at most.
	pcrMaxLifetime, pcrMaxKubernetesLifetime = 91 * 24 * 3600, 24 * 3600
	// pcrMaxStubRequest and pcrMaxChain bound the stored PEM and DER.
	pcrMaxStubRequest, pcrMaxChain = 10 * 1024, 100 * 1024
	// pcrUIDLength bounds the UIDs a request names.
	pcrUIDLength = 128
)

var (
	pcrStubPath  = specPath.Child("stubPKCS10Request")
	pcrChainPath = field.NewPath("status", "certificateChain")
	// pcrOutcomes are the condition types that end a request.
	pcrOutcomes = []string{certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed}
)

// nowFunc is the clock issued certificates are compared with.
var nowFunc = time.Now

func init() {
	register(&kind[*certificatesv1.PodCertificateRequest]{
		createOnly: podCertificateRequestRules,
		change: func(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
			return immutable(r.Spec, old.Spec, specPath)
		},
		statusChange: podCertificateRequestStatusChange,
	})
}

// podCertificateRequestRules checks what a kubelet asks for on a pod's
// behalf: whose certificate, how long at most, for which key.
func podCertificateRequestRules(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	s := &r.Spec
	errs := signerName(s.SignerName, specPath.Child("signerName"))
	for k := range s.UnverifiedUserAnnotations {
		errs = append(errs, qualifiedName(k, specPath.Child("unverifiedUserAnnotations"))...)
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(s.PodName) {
		errs = append(errs, field.Invalid(specPath.Child("podName"), s.PodName, msg))
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(s.ServiceAccountName) {
		errs = append(errs, field.Invalid(specPath.Child("serviceAccountName"), s.ServiceAccountName, msg))
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(string(s.NodeName)) {
		errs = append(errs, field.Invalid(specPath.Child("nodeName"), s.NodeName, msg))
	}
	for name, uid := range map[string]string{"podUID": string(s.PodUID), "serviceAccountUID": string(s.ServiceAccountUID), "nodeUID": string(s.NodeUID)} {
		switch {
		case uid == "":
			errs = append(errs, field.Invalid(specPath.Child(name), uid, "must not be empty"))
		case len(uid) > pcrUIDLength:
			errs = append(errs, field.TooLong(specPath.Child(name), uid, pcrUIDLength))
		}
	}
	if s.MaxExpirationSeconds == nil {
		return append(errs, field.Required(specPath.Child("maxExpirationSeconds"), "must be set"))
	}
	hi := pcrMaxLifetime
	if kubernetesSigner(s.SignerName) {
		hi = pcrMaxKubernetesLifetime
	}
	if m := int(*s.MaxExpirationSeconds); m < pcrMinLifetime || m > hi {
		errs = append(errs, field.Invalid(specPath.Child("maxExpirationSeconds"), m, fmt.Sprintf("must be in the range [%d, %d]", pcrMinLifetime, hi)))
	}
	if len(s.StubPKCS10Request) == 0 {
		return append(errs, field.Required(pcrStubPath, "the key to certify, as a signed PKCS#10 request"))
	}
	return append(errs, stubRequest(s.StubPKCS10Request)...)
}

// kubernetesSigner says whether signer is one of Kubernetes' own
// (kubernetes.io or a subdomain), which certify a day at most.
func kubernetesSigner(signer string) bool {
	domain, _, _ := strings.Cut(signer, "/")
	return domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io")
}

// stubRequest checks the request's key: a supported type and size, and a
// signature that proves its holder made the request. The rest of the CSR
// is the signer's business.
func stubRequest(der []byte) field.ErrorList {
	if len(der) > pcrMaxStubRequest {
		return field.ErrorList{field.TooLong(pcrStubPath, field.OmitValueType{}, pcrMaxStubRequest)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pcrStubPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(pcrStubPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pcrStubPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pcrStubPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := req.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(pcrStubPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

// podCertificateRequestStatusChange checks a signer's answer: one outcome,
// reached once; a denial or failure carries nothing else; an issued
// certificate belongs to the requested key, starts now, and fits the
// lifetime asked for.
func podCertificateRequestStatusChange(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	conds := field.NewPath("status", "conditions")
	var errs field.ErrorList
	outcomes := 0
	for i, c := range r.Status.Conditions {
		p := conds.Index(i)
		if !slices.Contains(pcrOutcomes, c.Type) {
			errs = append(errs, field.NotSupported(p.Child("type"), c.Type, pcrOutcomes))
			continue
		}
		if outcomes++; outcomes > 1 {
			errs = append(errs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
		}
		if c.Status != metav1.ConditionTrue {
			errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(r.Status.Conditions, conds)...)
	if len(errs) > 0 {
		return errs
	}
	status := field.NewPath("status")
	switch {
	case pcrOutcome(old) != "":
		return unchanged(r.Status, old.Status, status, "immutable after PodCertificateRequest is issued, denied, or failed")
	case pcrOutcome(r) == certificatesv1.PodCertificateRequestConditionTypeIssued:
		return issuedCertificate(r, old)
	case pcrOutcome(r) != "":
		return unchanged(r.Status, certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions}, status,
			"non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	}
	return unchanged(r.Status, old.Status, status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// pcrOutcome is the type of r's outcome condition, or "".
func pcrOutcome(r *certificatesv1.PodCertificateRequest) string {
	for _, t := range pcrOutcomes {
		if apimeta.IsStatusConditionTrue(r.Status.Conditions, t) {
			return t
		}
	}
	return ""
}

// issuedCertificate checks an issued chain against the request.
func issuedCertificate(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	st := &r.Status
	chain := st.CertificateChain
	if len(chain) > pcrMaxChain {
		return field.ErrorList{field.TooLong(pcrChainPath, field.OmitValueType{}, pcrMaxChain)}
	}
	var certs []*x509.Certificate
	for rest := []byte(chain); ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(pcrChainPath, field.OmitValueType{}, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return field.ErrorList{field.Invalid(pcrChainPath, field.OmitValueType{}, fmt.Sprintf("certificate %d does not parse as valid X.509", len(certs)))}
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return field.ErrorList{field.Invalid(pcrChainPath, field.OmitValueType{}, "issued certificate chain must contain at least one certificate")}
	}
	leaf := certs[0]
	req, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return field.ErrorList{field.Invalid(pcrStubPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	if k, ok := req.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !k.Equal(leaf.PublicKey) {
		return field.ErrorList{field.Invalid(pcrChainPath, field.OmitValueType{}, "leaf certificate was not issued to the requested public key")}
	}
	var errs field.ErrorList
	for _, name := range leaf.DNSNames {
		if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			errs = append(errs, field.Invalid(pcrChainPath, name, "leaf certificate has a malformed DNS name"))
		}
	}
	for name, t := range map[string]*metav1.Time{"notBefore": st.NotBefore, "notAfter": st.NotAfter, "beginRefreshAt": st.BeginRefreshAt} {
		if t == nil {
			errs = append(errs, field.Required(field.NewPath("status", name), "must be present and consistent with the issued certificate"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	nb, na, refresh := st.NotBefore.Time, st.NotAfter.Time, st.BeginRefreshAt.Time
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case !nb.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(field.NewPath("status", "notBefore"), nb, "must be set to the NotBefore time encoded in the leaf certificate")}
	case nb.Sub(nowFunc()).Abs() > 5*time.Minute:
		return field.ErrorList{field.Invalid(field.NewPath("status", "notBefore"), nb, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !na.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(field.NewPath("status", "notAfter"), na, "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(pcrChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case lifetime > time.Duration(*old.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(pcrChainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%d)", *old.Spec.MaxExpirationSeconds))}
	case refresh.Before(nb.Add(10 * time.Minute)):
		return field.ErrorList{field.Invalid(field.NewPath("status", "beginRefreshAt"), refresh, "must be at least 10 minutes after status.notBefore")}
	case refresh.After(na.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(field.NewPath("status", "beginRefreshAt"), refresh, "must be at least 10 minutes before status.notAfter")}
	}
	return nil
}

// unchanged reports at p that got must equal want.
func unchanged(got, want any, p *field.Path, detail string) field.ErrorList {
	if equality.Semantic.DeepEqual(got, want) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, field.OmitValueType{}, detail)}
}
