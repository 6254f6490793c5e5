// Package expiration reports when the cluster's certificates and the client
// certificates embedded in its kubeconfigs expire (`triremeadm certs
// check-expiration`).
package expiration

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/pki"
)

// Entry is one certificate's expiry.
type Entry struct {
	// Name is the certificate or kubeconfig name.
	Name string
	// Authority is the signing CA's name; empty for a CA.
	Authority string
	// NotAfter is when it expires.
	NotAfter time.Time
}

// Collect reads every certificate of specs below pkiDir and the client certificates
// of kubeconfigs (file names below configDir), leaving out missing files.
func Collect(pkiDir string, specs []pki.Spec, configDir string, kubeconfigs []string) ([]Entry, []Entry, error) {
	var leaves, cas []Entry
	for _, s := range specs {
		data, err := os.ReadFile(pki.CertPath(pkiDir, s.Name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		c, err := pki.ParseCert(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pki.CertPath(pkiDir, s.Name), err)
		}
		e := Entry{Name: s.Name, Authority: s.CA, NotAfter: c.NotAfter}
		if s.IsCA() {
			cas = append(cas, e)
		} else {
			leaves = append(leaves, e)
		}
	}
	for _, k := range kubeconfigs {
		path := filepath.Join(configDir, k)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		c, err := kubeconfig.ClientCert(path)
		if err != nil {
			return nil, nil, err
		}
		leaves = append(leaves, Entry{Name: k, Authority: pki.CA, NotAfter: c.NotAfter})
	}
	return leaves, cas, nil
}

// Print writes the two tables kubeadm prints.
func Print(w io.Writer, leaves, cas []Entry, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "CERTIFICATE\tEXPIRES\tRESIDUAL TIME\tCERTIFICATE AUTHORITY")
	for _, e := range leaves {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.NotAfter.UTC().Format("Jan 02, 2006 15:04 MST"), Residual(e.NotAfter, now), e.Authority)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CERTIFICATE AUTHORITY\tEXPIRES\tRESIDUAL TIME")
	for _, e := range cas {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.NotAfter.UTC().Format("Jan 02, 2006 15:04 MST"), Residual(e.NotAfter, now))
	}
	tw.Flush()
}

// Residual formats the time left as kubeadm does: "364d", "9y", "<invalid>".
func Residual(notAfter, now time.Time) string {
	d := notAfter.Sub(now)
	switch {
	case d <= 0:
		return "<invalid>"
	case d >= 2*365*24*time.Hour:
		return fmt.Sprintf("%dy", int(d.Hours()/24/365))
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	default:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
}
