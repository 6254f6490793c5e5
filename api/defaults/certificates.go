package defaults

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// CertificateSigningRequest fills a condition's missing status with True, so
// that an approver writing only the type approves, as upstream allows.
func CertificateSigningRequest(csr *certificatesv1.CertificateSigningRequest) {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Status == "" {
			csr.Status.Conditions[i].Status = corev1.ConditionTrue
		}
	}
}

// podCertificateLifetime is the lifetime a pod certificate request asks
// for when it names none: a day.
const podCertificateLifetime = 24 * 3600

// PodCertificateRequest asks for a day's certificate when the request
// names no maximum lifetime.
func PodCertificateRequest(r *certificatesv1.PodCertificateRequest) {
	if r.Spec.MaxExpirationSeconds == nil {
		r.Spec.MaxExpirationSeconds = new(int32(podCertificateLifetime))
	}
}
