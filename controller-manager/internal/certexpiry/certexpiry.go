// Package certexpiry warns before this control-plane node's certificates
// expire. It runs in every controller-manager, leader or not: the
// controller-manager is the one component that runs on each control-plane
// node only, with the node's certificates directory mounted, a client to
// write Events with and a /metrics endpoint, so the warning needs no new pod
// and no file access for anything else. Every Interval it reads each *.crt
// below Dir, sets the gauge
// trireme_controller_manager_certificate_expiration_timestamp_seconds per
// certificate, and for each that expires within Warn records a Warning Event
// (reason CertificateExpiringSoon) on the Node, at most once a day per
// certificate.
package certexpiry

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/controller-manager/internal/metrics"
)

// Reason is the Events' reason.
const Reason = "CertificateExpiringSoon"

// Cert is one certificate file.
type Cert struct {
	// Name is its path below the directory without ".crt" ("apiserver",
	// "etcd/server"), as `triremeadm certs check-expiration` names it.
	Name     string
	NotAfter time.Time
}

// Scan reads every *.crt below dir, sorted by name; files that hold no
// certificate are skipped.
func Scan(dir string) ([]Cert, error) {
	var out []Cert
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".crt") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b, _ := pem.Decode(data)
		if b == nil || b.Type != "CERTIFICATE" {
			return nil
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, Cert{Name: strings.TrimSuffix(filepath.ToSlash(rel), ".crt"), NotAfter: c.NotAfter})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Watcher checks Dir for Node.
type Watcher struct {
	Dir, Node string
	// Warn is how long before expiry the Events start.
	Warn time.Duration
	// Interval is how often Dir is read.
	Interval time.Duration
	Client   kubernetes.Interface
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	warned map[string]time.Time
}

// Run checks at once and then every Interval until ctx ends.
func (w *Watcher) Run(ctx context.Context, log logr.Logger) {
	for {
		if err := w.Check(ctx); err != nil {
			log.Error(err, "Checking certificate expiry failed", "dir", w.Dir)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.Interval):
		}
	}
}

// Check reads Dir once, updates the gauge and records the Events due.
func (w *Watcher) Check(ctx context.Context) error {
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	if w.warned == nil {
		w.warned = map[string]time.Time{}
	}
	certs, err := Scan(w.Dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", w.Dir, err)
	}
	var errs []string
	for _, c := range certs {
		metrics.CertificateExpiration.WithLabelValues(c.Name).Set(float64(c.NotAfter.Unix()))
		left := c.NotAfter.Sub(now)
		if left > w.Warn || now.Sub(w.warned[c.Name]) < 24*time.Hour {
			continue
		}
		if err := w.event(ctx, c, left, now); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		w.warned[c.Name] = now
	}
	if len(errs) > 0 {
		return fmt.Errorf("record events: %s", strings.Join(errs, "; "))
	}
	return nil
}

func (w *Watcher) event(ctx context.Context, c Cert, left time.Duration, now time.Time) error {
	msg := fmt.Sprintf("certificate %s (%s) expires on %s, in %s: run `triremeadm certs renew all` on this node",
		c.Name, filepath.Join(w.Dir, c.Name+".crt"), c.NotAfter.UTC().Format(time.RFC3339), left.Round(time.Hour))
	if left <= 0 {
		msg = fmt.Sprintf("certificate %s (%s) expired on %s: run `triremeadm certs renew all` on this node",
			c.Name, filepath.Join(w.Dir, c.Name+".crt"), c.NotAfter.UTC().Format(time.RFC3339))
	}
	t := metav1.NewTime(now)
	// A Node's Events live in the default namespace, as the kubelet's do.
	_, err := w.Client.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, &corev1.Event{
		// Named as the kubelet names its Events: object, then a unique suffix.
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x.%s", w.Node, now.UnixNano(), strings.ReplaceAll(c.Name, "/", "-")), Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: w.Node, APIVersion: "v1"},
		Reason:         Reason, Message: msg, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "trireme-controller-manager", Host: w.Node},
		FirstTimestamp: t, LastTimestamp: t, Count: 1,
		ReportingController: "trireme.dev/certificate-expiry", ReportingInstance: w.Node,
	}, metav1.CreateOptions{})
	return err
}
