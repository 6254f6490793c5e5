package validation

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*certificatesv1.ClusterTrustBundle]{
		cluster: true,
		// The name's rules depend on spec.signerName, so spec checks it.
		name: func(string, bool) []string { return nil },
		spec: clusterTrustBundleRules,
		change: func(ctb, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
			return immutable(ctb.Spec.SignerName, old.Spec.SignerName, specPath.Child("signerName"))
		},
	})
}

// maxTrustBundleSize bounds spec.trustBundle as upstream does: every
// kubelet mounting the bundle holds a copy.
const maxTrustBundleSize = 1 << 20

// ClusterTrustBundleNamePrefix is the prefix a ClusterTrustBundle's name
// must have when it names signer: the signer name with its slashes turned
// into colons, then a colon ("example.com/foo" → "example.com:foo:").
func ClusterTrustBundleNamePrefix(signer string) string {
	return strings.ReplaceAll(signer, "/", ":") + ":"
}

func clusterTrustBundleRules(ctb *certificatesv1.ClusterTrustBundle) field.ErrorList {
	var errs field.ErrorList
	namePath := metadataPath.Child("name")
	signer := ctb.Spec.SignerName
	suffix := ctb.Name
	if signer != "" {
		errs = append(errs, signerName(signer, specPath.Child("signerName"))...)
		prefix := ClusterTrustBundleNamePrefix(signer)
		if !strings.HasPrefix(ctb.Name, prefix) {
			errs = append(errs, field.Invalid(namePath, ctb.Name, fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signer, prefix)))
		}
		suffix = strings.TrimPrefix(ctb.Name, prefix)
	} else if strings.Contains(ctb.Name, ":") {
		errs = append(errs, field.Invalid(namePath, ctb.Name, "ClusterTrustBundle without signer name must not have \":\" in its name"))
	}
	if ctb.Name != "" {
		for _, msg := range content.IsPathSegmentName(suffix) {
			errs = append(errs, field.Invalid(namePath, ctb.Name, msg))
		}
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(strings.ReplaceAll(suffix, ":", "."), false) {
			errs = append(errs, field.Invalid(namePath, ctb.Name, msg))
		}
	}
	errs = append(errs, trustAnchors(ctb.Spec.TrustBundle, specPath.Child("trustBundle"))...)
	return errs
}

// trustAnchors checks a PEM bundle of CA certificates: parseable, each a
// CA, none repeated.
func trustAnchors(bundle string, fldPath *field.Path) field.ErrorList {
	if len(bundle) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(fldPath, "<value omitted>", maxTrustBundleSize)}
	}
	var raws [][]byte
	err := eachCertificate([]byte(bundle), func(i int, cert *x509.Certificate) error {
		if !cert.BasicConstraintsValid || !cert.IsCA {
			return fmt.Errorf("entry %d: certificate is not a CA certificate (basic constraints must be present with the CA bit set)", i)
		}
		for j, raw := range raws {
			if bytes.Equal(raw, cert.Raw) {
				return fmt.Errorf("duplicate trust anchor (indices %v)", []int{j, i})
			}
		}
		raws = append(raws, cert.Raw)
		return nil
	})
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, "<value omitted>", err.Error())}
	}
	return nil
}
