package validation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func validWebhookConfig() *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: clusterMeta("hooks"), Webhooks: []admissionregistrationv1.ValidatingWebhook{{
		Name:         "check.example.com",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr("https://hooks.example.com/check")},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		}},
		SideEffects:             ptr(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
		TimeoutSeconds:          ptr[int32](10),
	}}}
}

func TestWebhookConfiguration(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(c *admissionregistrationv1.ValidatingWebhookConfiguration)
		want   []want
	}{
		{"valid", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {}, nil},
		{"name needs three segments", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) { c.Webhooks[0].Name = "check" }, []want{invalid("webhooks[0].name")}},
		{"duplicate names", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks = append(c.Webhooks, c.Webhooks[0])
		}, []want{dup("webhooks[1].name")}},
		{"side effects required", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) { c.Webhooks[0].SideEffects = nil }, []want{required("webhooks[0].sideEffects")}},
		{"unknown side effects", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].SideEffects = ptr(admissionregistrationv1.SideEffectClassUnknown)
		}, []want{notSup("webhooks[0].sideEffects")}},
		{"review versions required", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].AdmissionReviewVersions = nil
		}, []want{required("webhooks[0].admissionReviewVersions")}},
		{"timeout too long", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].TimeoutSeconds = ptr[int32](31)
		}, []want{invalid("webhooks[0].timeoutSeconds")}},
		{"http url refused", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].ClientConfig.URL = ptr("http://hooks.example.com/")
		}, []want{invalid("webhooks[0].clientConfig.url")}},
		{"url and service both set", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].ClientConfig.Service = &admissionregistrationv1.ServiceReference{Name: "s", Namespace: "ns"}
		}, []want{required("webhooks[0].clientConfig")}},
		{"wildcard operation with others", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].Rules[0].Operations = []admissionregistrationv1.OperationType{"*", admissionregistrationv1.Create}
		}, []want{invalid("webhooks[0].rules[0].operations")}},
		{"resources required", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].Rules[0].Resources = nil
		}, []want{required("webhooks[0].rules[0].resources")}},
		{"bad scope", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			c.Webhooks[0].Rules[0].Scope = ptr(admissionregistrationv1.ScopeType("Galaxy"))
		}, []want{notSup("webhooks[0].rules[0].scope")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validWebhookConfig()
			tc.mutate(c)
			expectErrs(t, ValidateCreate(c), tc.want...)
		})
	}
}

func validPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: clusterMeta("replicas"), Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: ptr(admissionregistrationv1.Fail),
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
			},
		}}},
		Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}},
	}}
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *admissionregistrationv1.ValidatingAdmissionPolicy)
		want   []want
	}{
		{"valid", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {}, nil},
		{"validations required", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations = nil }, []want{required("spec.validations")}},
		{"match constraints required", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.MatchConstraints = nil }, []want{required("spec.matchConstraints")}},
		{"empty expression", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations[0].Expression = " " }, []want{required("spec.validations[0].expression")}},
		{"bad reason", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Reason = ptr(metav1.StatusReason("Nope"))
		}, []want{notSup("spec.validations[0].reason")}},
		{"variable name not CEL", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "1bad", Expression: "1"}}
		}, []want{invalid("spec.variables[0].name")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := validPolicy()
			tc.mutate(p)
			expectErrs(t, ValidateCreate(p), tc.want...)
		})
	}
}

func TestValidatingAdmissionPolicyBinding(t *testing.T) {
	cases := []struct {
		name string
		spec admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec
		want []want
	}{
		{"valid", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}, nil},
		{"policy name required", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}, []want{required("spec.policyName")}},
		{"actions required", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p"}, []want{required("spec.validationActions")}},
		{"deny and warn together", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Warn}}, []want{invalid("spec.validationActions")}},
		{"param ref name and selector", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit},
			ParamRef: &admissionregistrationv1.ParamRef{Name: "x", Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: ptr(admissionregistrationv1.DenyAction)}}, []want{forbidden("spec.paramRef.name")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: clusterMeta("b"), Spec: tc.spec}
			expectErrs(t, ValidateCreate(b), tc.want...)
		})
	}
}

func csrRequest(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestCertificateSigningRequest(t *testing.T) {
	req := csrRequest(t)
	valid := func() *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: clusterMeta("alice"), Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: req, SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		}}
	}
	cases := []struct {
		name   string
		mutate func(c *certificatesv1.CertificateSigningRequest)
		want   []want
	}{
		{"valid", func(c *certificatesv1.CertificateSigningRequest) {}, nil},
		{"kubelet's digest name", func(c *certificatesv1.CertificateSigningRequest) { c.Name = "node-csr-Ab_9-xYz" }, nil},
		{"slash in name", func(c *certificatesv1.CertificateSigningRequest) { c.Name = "a/b" }, []want{invalid("metadata.name")}},
		{"request not PEM", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("junk") }, []want{invalid("spec.request")}},
		{"signer required", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" }, []want{required("spec.signerName")}},
		{"signer needs a path", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com" }, []want{invalid("spec.signerName")}},
		{"usages required", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil }, []want{required("spec.usages")}},
		{"unknown usage", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = []certificatesv1.KeyUsage{"flying"} }, []want{notSup("spec.usages[0]")}},
		{"duration too short", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr[int32](60) }, []want{invalid("spec.expirationSeconds")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.mutate(c)
			expectErrs(t, ValidateCreate(c), tc.want...)
		})
	}
	cond := func(typ certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: corev1.ConditionTrue}
	}
	statusCases := []struct {
		name     string
		old, new []certificatesv1.CertificateSigningRequestCondition
		want     []want
	}{
		{"approve", nil, []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved)}, nil},
		{"approved and denied", nil, []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved), cond(certificatesv1.CertificateDenied)}, []want{invalid("status.conditions")}},
		{"approval cannot be removed", []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved)}, nil, []want{forbidden("status.conditions")}},
		{"duplicate approval", nil, []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved), cond(certificatesv1.CertificateApproved)}, []want{dup("status.conditions[1].type")}},
	}
	for _, tc := range statusCases {
		t.Run(tc.name, func(t *testing.T) {
			old := valid()
			stored(&old.ObjectMeta)
			old.Status.Conditions = tc.old
			c := old.DeepCopy()
			c.Status.Conditions = tc.new
			expectErrs(t, ValidateStatusUpdate(c, old), tc.want...)
		})
	}
	t.Run("spec immutable", func(t *testing.T) {
		old := valid()
		stored(&old.ObjectMeta)
		c := old.DeepCopy()
		c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}
		expectErrs(t, ValidateUpdate(c, old), forbidden("spec"))
	})
}
