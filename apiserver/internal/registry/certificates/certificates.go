// Package certificates holds the parts of the CertificateSigningRequest
// registry the shared strategy cannot express: the requester's identity
// recorded on create, a spec nobody can change, and the approval
// subresource that alone may approve or deny.
package certificates

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"trireme.dev/api/validation"
	"trireme.dev/apiserver/internal/registry"
)

// Hooks are the CSR strategy's type-specific parts.
var Hooks = registry.Hooks{
	PrepareForCreate:       prepareForCreate,
	PrepareForUpdate:       prepareForUpdate,
	PrepareForStatusUpdate: prepareForStatusUpdate,
}

// prepareForCreate records who asked: signers and approvers trust these
// fields, so they come from the authenticated request, never the body.
func prepareForCreate(ctx context.Context, obj runtime.Object) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if user, ok := genericapirequest.UserFrom(ctx); ok {
		csr.Spec.Username = user.GetName()
		csr.Spec.UID = user.GetUID()
		csr.Spec.Groups = user.GetGroups()
		if extra := user.GetExtra(); len(extra) > 0 {
			csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
			for k, v := range extra {
				csr.Spec.Extra[k] = v
			}
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
}

// prepareForUpdate keeps spec and status: through the main resource only
// metadata (labels, finalizers) changes.
func prepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = oldCSR.Spec
	csr.Status = oldCSR.Status
}

// prepareForStatusUpdate keeps the approval decision: signers write the
// certificate and other conditions, but only /approval approves or denies.
func prepareForStatusUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	var conds []certificatesv1.CertificateSigningRequestCondition
	for _, c := range oldCSR.Status.Conditions {
		if isDecision(c.Type) {
			conds = append(conds, c)
		}
	}
	for _, c := range csr.Status.Conditions {
		if !isDecision(c.Type) {
			conds = append(conds, c)
		}
	}
	csr.Status.Conditions = stampConditions(conds, oldCSR.Status.Conditions)
}

func isDecision(t certificatesv1.RequestConditionType) bool {
	return t == certificatesv1.CertificateApproved || t == certificatesv1.CertificateDenied
}

// stampConditions fills lastUpdateTime and lastTransitionTime of new or
// changed conditions, as upstream does so that approvers need not.
func stampConditions(conds, old []certificatesv1.CertificateSigningRequestCondition) []certificatesv1.CertificateSigningRequestCondition {
	now := metav1.Now()
	for i := range conds {
		c := &conds[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return conds
}

// NewApprovalStore returns certificatesigningrequests/approval, which
// changes only status.conditions (`kubectl certificate approve|deny`).
func NewApprovalStore(main *registry.Store) *registry.SubresourceStore {
	return registry.NewPartStore(main, registry.PartUpdate{
		Prepare: func(obj, old runtime.Object) {
			csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
			conds := csr.Status.Conditions
			for i := range conds {
				if conds[i].Status == "" {
					conds[i].Status = corev1.ConditionTrue
				}
			}
			csr.Spec = oldCSR.Spec
			csr.Status = oldCSR.Status
			csr.Status.Conditions = stampConditions(conds, oldCSR.Status.Conditions)
		},
		Validate: func(obj, old runtime.Object) field.ErrorList {
			return validation.ValidateStatusUpdate(obj, old)
		},
	})
}
