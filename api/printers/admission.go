package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

var webhookConfigurationColumns = columns(
	nameCol(),
	col("Webhooks", typeInteger, "Webhooks indicates the number of webhooks registered in this configuration"),
	ageCol(),
)

func validatingWebhookConfigurationCells(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) []any {
	return []any{c.Name, int64(len(c.Webhooks)), age(c, now)}
}

func mutatingWebhookConfigurationCells(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) []any {
	return []any{c.Name, int64(len(c.Webhooks)), age(c, now)}
}

var validatingAdmissionPolicyColumns = columns(
	nameCol(),
	col("Validations", typeInteger, "Validations indicates the number of validation rules defined in this configuration"),
	col("ParamKind", typeString, "ParamKind specifies the kind of resources used to parameterize this policy"),
	ageCol(),
)

// paramKind prints a policy's parameter kind as group/version/Kind, or
// "<unset>" for policies without parameters.
func paramKind(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return unset
	}
	return pk.APIVersion + "/" + pk.Kind
}

func validatingAdmissionPolicyCells(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []any {
	return []any{p.Name, int64(len(p.Spec.Validations)), paramKind(p.Spec.ParamKind), age(p, now)}
}

var mutatingAdmissionPolicyColumns = columns(
	nameCol(),
	col("Mutations", typeInteger, "Mutation indicates the number of mutations rules defined in this configuration"),
	col("ParamKind", typeString, "ParamKind specifies the kind of resources used to parameterize this policy"),
	ageCol(),
)

func mutatingAdmissionPolicyCells(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) []any {
	return []any{p.Name, int64(len(p.Spec.Mutations)), paramKind(p.Spec.ParamKind), age(p, now)}
}

var policyBindingColumns = columns(
	nameCol(),
	col("PolicyName", typeString, "PolicyName indicates the policy definition which the policy binding binded to"),
	col("ParamRef", typeString, "ParamRef indicates the param resource which sets the configration param"),
	ageCol(),
)

// paramRef prints a binding's parameter reference as namespace/name (or a
// selector), "<unset>" when the binding names none.
func paramRef(r *admissionregistrationv1.ParamRef) string {
	if r == nil {
		return unset
	}
	switch {
	case r.Name != "" && r.Namespace != "":
		return r.Namespace + "/" + r.Name
	case r.Name != "":
		return r.Name
	case r.Selector != nil && r.Namespace != "":
		return r.Namespace + "/" + r.Selector.String()
	case r.Selector != nil:
		return r.Selector.String()
	}
	return unset
}

func validatingAdmissionPolicyBindingCells(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []any {
	return []any{b.Name, b.Spec.PolicyName, paramRef(b.Spec.ParamRef), age(b, now)}
}

func mutatingAdmissionPolicyBindingCells(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) []any {
	return []any{b.Name, b.Spec.PolicyName, paramRef(b.Spec.ParamRef), age(b, now)}
}

var certificateSigningRequestColumns = columns(
	nameCol(),
	ageCol(),
	col("SignerName", typeString, certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]),
	col("Requestor", typeString, certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["username"]),
	col("RequestedDuration", typeString, certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]),
	col("Condition", typeString, certificatesv1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
)

func certificateSigningRequestCells(csr *certificatesv1.CertificateSigningRequest, now time.Time) []any {
	requested := none
	if s := csr.Spec.ExpirationSeconds; s != nil {
		requested = duration.HumanDuration(time.Duration(*s) * time.Second)
	}
	return []any{csr.Name, age(csr, now), orNone(csr.Spec.SignerName), csr.Spec.Username, requested, csrCondition(&csr.Status)}
}

// clusterTrustBundleColumns are upstream's: the bundle's signer, no age.
var clusterTrustBundleColumns = columns(
	nameCol(),
	col("SignerName", typeString, certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
)

func clusterTrustBundleCells(ctb *certificatesv1.ClusterTrustBundle, _ time.Time) []any {
	return []any{ctb.Name, orNone(ctb.Spec.SignerName)}
}

// csrCondition summarises a CSR's state as kubectl shows it: the true
// Approved/Denied/Failed conditions, sorted, with ",Issued" once a
// certificate is present; "Pending" otherwise.
func csrCondition(st *certificatesv1.CertificateSigningRequestStatus) string {
	var conds []string
	for _, c := range st.Conditions {
		if c.Status == corev1.ConditionTrue || c.Status == "" {
			conds = append(conds, string(c.Type))
		}
	}
	sort.Strings(conds)
	if len(conds) == 0 {
		conds = []string{"Pending"}
	}
	s := strings.Join(conds, ",")
	if len(st.Certificate) > 0 {
		s = fmt.Sprintf("%s,Issued", s)
	}
	return s
}
