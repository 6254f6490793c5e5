package certapproval

import "trireme.dev/apiserver/internal/admissionchain/plugins/certsigning"

// New returns the CertificateApproval plugin: approving or denying a CSR
// needs "approve" on its signer.
func New() *certsigning.SignerCheck {
	return certsigning.NewSignerCheck(Name, "approval", "approve", nil)
}
