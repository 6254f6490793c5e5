package validation

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*certificatesv1.CertificateSigningRequest]{
		cluster: true,
		// Upstream accepts any name a URL path can carry: kubelets name
		// their bootstrap CSRs node-csr-<base64url digest>, capitals included.
		name: pathSegmentName,
		spec: csrSpecRules,
		createOnly: func(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
			return csrStatus(&csr.Status, nil)
		},
		change:       csrChange,
		statusChange: csrStatusChange,
	})
}

var (
	csrStatusPath = field.NewPath("status")
	keyUsages     = sets.New(
		certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
		certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly,
		certificatesv1.UsageDecipherOnly, certificatesv1.UsageAny, certificatesv1.UsageServerAuth,
		certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning, certificatesv1.UsageEmailProtection,
		certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem, certificatesv1.UsageIPsecTunnel,
		certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping, certificatesv1.UsageOCSPSigning,
		certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC,
	)
	// exclusiveConditions may each appear once, only with status True.
	exclusiveConditions = []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed}
)

// minCSRExpirationSeconds is the shortest certificate a CSR may ask for:
// shorter ones would expire before a client could rotate them.
const minCSRExpirationSeconds = 600

// ParseCSR decodes the PEM "CERTIFICATE REQUEST" block of a CSR's
// spec.request; admission plugins reuse it to read the requested subject.
func ParseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	return csr, nil
}

func csrSpecRules(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	s := &csr.Spec
	var errs field.ErrorList
	if len(s.Request) == 0 {
		errs = append(errs, field.Required(specPath.Child("request"), ""))
	} else if req, err := ParseCSR(s.Request); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("request"), s.Request, err.Error()))
	} else if err := req.CheckSignature(); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("request"), s.Request, fmt.Sprintf("invalid signature: %v", err)))
	}
	if len(s.Usages) == 0 {
		errs = append(errs, field.Required(specPath.Child("usages"), "usages must be provided"))
	}
	seen := sets.New[certificatesv1.KeyUsage]()
	for i, u := range s.Usages {
		p := specPath.Child("usages").Index(i)
		if !keyUsages.Has(u) {
			errs = append(errs, field.NotSupported(p, u, sets.List(keyUsages)))
		}
		if seen.Has(u) {
			errs = append(errs, field.Duplicate(p, u))
		}
		seen.Insert(u)
	}
	errs = append(errs, signerName(s.SignerName, specPath.Child("signerName"))...)
	if s.ExpirationSeconds != nil && *s.ExpirationSeconds < minCSRExpirationSeconds {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), *s.ExpirationSeconds, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	return errs
}

// signerName checks the "<domain>/<path>" form every signer name has
// ("kubernetes.io/kube-apiserver-client").
func signerName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || domain == "" || path == "" {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(domain) {
		errs = append(errs, field.Invalid(fldPath, name, "the domain part "+msg))
	}
	if len(strings.Split(domain, ".")) < 2 {
		errs = append(errs, field.Invalid(fldPath, name, "should be a domain with at least two segments separated by dots"))
	}
	if len(path) > 253 {
		errs = append(errs, field.TooLong(fldPath, name, 253+len(domain)+1))
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(strings.ToLower(strings.ReplaceAll(path, "/", "."))) {
		errs = append(errs, field.Invalid(fldPath, name, "validating path: "+msg))
	}
	return errs
}

func csrChange(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	if !apiequality.Semantic.DeepEqual(csr.Spec, old.Spec) {
		return field.ErrorList{field.Forbidden(specPath, "updates to certificatesigningrequest spec are forbidden")}
	}
	return nil
}

func csrStatusChange(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	errs := csrChange(csr, old)
	return append(errs, csrStatus(&csr.Status, &old.Status)...)
}

// csrStatus checks conditions and the issued certificate; old is nil on
// create. An approval or denial, once given, cannot be taken back, and an
// issued certificate cannot be replaced.
func csrStatus(st, old *certificatesv1.CertificateSigningRequestStatus) field.ErrorList {
	var errs field.ErrorList
	cp := csrStatusPath.Child("conditions")
	count := map[certificatesv1.RequestConditionType]int{}
	for i, c := range st.Conditions {
		p := cp.Index(i)
		if c.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), ""))
		}
		if c.Status == "" {
			errs = append(errs, field.Required(p.Child("status"), ""))
		} else {
			errs = append(errs, enum(c.Status, p.Child("status"), corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown)...)
		}
		for _, t := range exclusiveConditions {
			if c.Type != t {
				continue
			}
			count[t]++
			if count[t] > 1 {
				errs = append(errs, field.Duplicate(p.Child("type"), c.Type))
			}
			if c.Status != "" && c.Status != corev1.ConditionTrue {
				errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []string{string(corev1.ConditionTrue)}))
			}
		}
	}
	if count[certificatesv1.CertificateApproved] > 0 && count[certificatesv1.CertificateDenied] > 0 {
		errs = append(errs, field.Invalid(cp, st.Conditions, fmt.Sprintf("%s and %s conditions are mutually exclusive", certificatesv1.CertificateApproved, certificatesv1.CertificateDenied)))
	}
	if old != nil {
		for _, c := range old.Conditions {
			for _, t := range exclusiveConditions {
				if c.Type == t && count[t] == 0 {
					errs = append(errs, field.Forbidden(cp, fmt.Sprintf("updates may not remove a condition of type %q", t)))
				}
			}
		}
	}
	certPath := csrStatusPath.Child("certificate")
	if len(st.Certificate) > 0 {
		if count[certificatesv1.CertificateApproved] == 0 {
			errs = append(errs, field.Invalid(certPath, "<certificate data>", "certificate may only be set if the Approved condition is true"))
		}
		if count[certificatesv1.CertificateFailed] > 0 {
			errs = append(errs, field.Invalid(certPath, "<certificate data>", "certificate may not be set if the Failed condition is true"))
		}
		if err := certificateBlocks(st.Certificate); err != nil {
			errs = append(errs, field.Invalid(certPath, "<certificate data>", err.Error()))
		}
	}
	if old != nil && len(old.Certificate) > 0 && !bytes.Equal(old.Certificate, st.Certificate) {
		errs = append(errs, field.Forbidden(certPath, "updates may not modify existing certificate content"))
	}
	return errs
}

// certificateBlocks checks that data is one or more PEM CERTIFICATE blocks
// holding parseable certificates, and nothing else.
func certificateBlocks(data []byte) error {
	return eachCertificate(data, nil)
}

// eachCertificate parses data as one or more PEM CERTIFICATE blocks with no
// headers and nothing between them but space, calling visit (when not nil)
// with each certificate's index and parsed form; it stops at the first
// error, its own or visit's.
func eachCertificate(data []byte, visit func(i int, cert *x509.Certificate) error) error {
	rest := bytes.TrimSpace(data)
	n := 0
	for len(rest) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return errors.New("must contain only PEM-encoded CERTIFICATE blocks")
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) > 0 {
			return errors.New("no PEM block headers are permitted")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return fmt.Errorf("failed to parse certificate %d: %w", n, err)
		}
		if visit != nil {
			if err := visit(n, cert); err != nil {
				return err
			}
		}
		n++
		rest = bytes.TrimSpace(rest)
	}
	if n == 0 {
		return errors.New("at least one CERTIFICATE PEM block is required")
	}
	return nil
}
