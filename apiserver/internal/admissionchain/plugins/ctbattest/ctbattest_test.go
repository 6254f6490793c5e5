package ctbattest

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestClusterTrustBundleAttest(t *testing.T) {
	bundle := func(signer, anchors string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: anchors}}
	}
	tests := []struct {
		name     string
		grants   admissiontest.Grants
		op       admission.Operation
		obj, old *certificatesv1.ClusterTrustBundle
		wantErr  string
	}{
		{"no signer needs nothing", nil, admission.Create, bundle("", "a"), nil, ""},
		{"create without attest", nil, admission.Create, bundle("example.com/foo", "a"), nil, `user not permitted to attest for signerName "example.com/foo"`},
		{"create with attest on signer", admissiontest.Grants{"attest signers example.com/foo": true}, admission.Create, bundle("example.com/foo", "a"), nil, ""},
		{"create with attest on domain", admissiontest.Grants{"attest signers example.com/*": true}, admission.Create, bundle("example.com/foo", "a"), nil, ""},
		{"other verb is not enough", admissiontest.Grants{"sign signers example.com/foo": true}, admission.Create, bundle("example.com/foo", "a"), nil, "not permitted"},
		{"update of anchors needs attest", nil, admission.Update, bundle("example.com/foo", "b"), bundle("example.com/foo", "a"), "not permitted"},
		{"update keeping anchors needs nothing", nil, admission.Update, bundle("example.com/foo", "a"), bundle("example.com/foo", "a"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New()
			p.SetAuthorizer(tc.grants.Authorizer())
			if err := p.ValidateInitialization(); err != nil {
				t.Fatal(err)
			}
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			attrs := admission.NewAttributesRecord(tc.obj, old, certificatesv1.SchemeGroupVersion.WithKind("ClusterTrustBundle"),
				"", "b", certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles"), "", tc.op, nil, false,
				&user.DefaultInfo{Name: "alice"})
			err := p.Validate(context.Background(), attrs, nil)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			case err != nil && !strings.Contains(err.Error(), "forbidden"):
				t.Fatalf("error %v is not a Forbidden", err)
			}
		})
	}
}
