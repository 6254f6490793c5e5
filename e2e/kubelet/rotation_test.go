package kubelet_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"

	"trireme.dev/componentbase/testwait"
)

// certificateLifetime is how long the suite's controller-manager signs
// certificates for: the kubelet renews at 70–90 % of it, so both of its
// certificates are renewed a few minutes into the suite.
const certificateLifetime = 4 * time.Minute

// TestCertificateRotation: with certificates that live certificateLifetime,
// the kubelet, never restarted for it, renews its client certificate (a CSR
// as its node, auto-approved) and its serving certificate (a kubelet-serving
// CSR) before they expire, and goes on acting as its node and serving with
// the new ones.
func TestCertificateRotation(t *testing.T) {
	ctx := context.Background()
	pair := filepath.Join(suite.dir, "root", "pki", "kubelet-client-current.pem")
	node := "system:node:" + suite.nodeName
	// issuedTo returns the serials of the certificates signer issued to
	// user, oldest first.
	issuedTo := func(signer, user string) ([]string, error) {
		csrs, err := suite.client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		items := csrs.Items
		slices.SortFunc(items, func(a, b certificatesv1.CertificateSigningRequest) int {
			return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
		})
		var serials []string
		for _, c := range items {
			if c.Spec.SignerName != signer || c.Spec.Username != user || len(c.Status.Certificate) == 0 {
				continue
			}
			certs, err := certutil.ParseCertsPEM(c.Status.Certificate)
			if err != nil {
				return nil, fmt.Errorf("CSR %s: %w", c.Name, err)
			}
			serials = append(serials, certs[0].SerialNumber.String())
		}
		return serials, nil
	}
	var client, serving *x509.Certificate
	testwait.ForNil(t, certificateLifetime+time.Minute, "both of the kubelet's certificates renewed", func() error {
		data, err := os.ReadFile(pair)
		if err != nil {
			return err
		}
		certs, err := certutil.ParseCertsPEM(data)
		if err != nil {
			return err
		}
		client = certs[0]
		renewals, err := issuedTo(certificatesv1.KubeAPIServerClientKubeletSignerName, node)
		if err != nil {
			return err
		}
		if !slices.Contains(renewals, client.SerialNumber.String()) {
			return fmt.Errorf("the client certificate (serial %s, until %s) is still the bootstrap token's", client.SerialNumber, client.NotAfter.Format(time.RFC3339))
		}
		if serving, err = servingCertificate(); err != nil {
			return err
		}
		servings, err := issuedTo(certificatesv1.KubeletServingSignerName, node)
		if err != nil {
			return err
		}
		if i := slices.Index(servings, serving.SerialNumber.String()); i < 1 {
			return fmt.Errorf("the serving certificate (serial %s, until %s) is not a renewed one (%d serving certificates issued)",
				serving.SerialNumber, serving.NotAfter.Format(time.RFC3339), len(servings))
		}
		return nil
	})
	for name, c := range map[string]*x509.Certificate{"client": client, "serving": serving} {
		if life := c.NotAfter.Sub(c.NotBefore); life > certificateLifetime {
			t.Errorf("the %s certificate lives %s, longer than the signer's %s", name, life, certificateLifetime)
		}
		if time.Now().After(c.NotAfter) {
			t.Errorf("the %s certificate in use expired at %s", name, c.NotAfter)
		}
	}
	// The node acts as itself with the renewed client certificate.
	testwait.ForNil(t, time.Minute, "the node's Lease renewed with the renewed certificate", func() error {
		lease, err := suite.client.CoordinationV1().Leases("kube-node-lease").Get(ctx, suite.nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(client.NotBefore) {
			return fmt.Errorf("lease renewed at %v, the certificate issued at %s", lease.Spec.RenewTime, client.NotBefore)
		}
		return nil
	})
}
