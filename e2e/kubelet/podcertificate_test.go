package kubelet_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"trireme.dev/componentbase/testpki"
)

// testSigner issues the PodCertificateRequests of its signer name, as
// upstream's e2e signer does: a certificate for the request's key, a
// SPIFFE URI naming the pod's namespace and service account, a lifetime
// of maxExpirationSeconds up to a day, renewal from refresh before its
// end.
type testSigner struct {
	name    string
	ca      *testpki.CA
	refresh func(lifetime time.Duration) time.Duration

	mu     sync.Mutex
	issued []*certificatesv1.PodCertificateRequest
	errs   []error
}

// run issues the signer's requests until ctx ends; what fails is kept for
// err, so that the signer may outlive the test that started it. It lists
// and watches again whenever its watch ends, as when a test restarts the
// apiserver while a renewal is pending.
func (s *testSigner) run(ctx context.Context) error {
	sel := fields.OneTermEqualSelector("spec.signerName", s.name).String()
	pcrs := suite.client.CertificatesV1().PodCertificateRequests("")
	// The first list must work: it says the signer is in business.
	list, err := pcrs.List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return fmt.Errorf("list pod certificate requests: %w", err)
	}
	// handle issues r unless it is answered already, keeping what fails.
	handle := func(r *certificatesv1.PodCertificateRequest) {
		if len(r.Status.Conditions) > 0 {
			return
		}
		if err := s.issue(ctx, r); err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("issue %s/%s: %w", r.Namespace, r.Name, err))
			s.mu.Unlock()
		}
	}
	go func() {
		for ctx.Err() == nil {
			if list == nil {
				if list, err = pcrs.List(ctx, metav1.ListOptions{FieldSelector: sel}); err != nil {
					time.Sleep(time.Second)
					continue
				}
			}
			for i := range list.Items {
				handle(&list.Items[i])
			}
			w, err := pcrs.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
			list = nil
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			for ev := range w.ResultChan() {
				if r, ok := ev.Object.(*certificatesv1.PodCertificateRequest); ok && ev.Type == watch.Added {
					handle(r)
				}
			}
			w.Stop()
		}
	}()
	return nil
}

// err is what the signer failed to do so far.
func (s *testSigner) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

func (s *testSigner) issue(ctx context.Context, r *certificatesv1.PodCertificateRequest) error {
	csr, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request)
	if err != nil {
		return err
	}
	lifetime := min(24*time.Hour, time.Duration(*r.Spec.MaxExpirationSeconds)*time.Second)
	// As early as the apiserver allows (5 minutes back), so that the
	// earliest renewal it allows (10 minutes after) comes soon.
	notBefore := time.Now().Add(-4*time.Minute - 30*time.Second).Truncate(time.Second)
	notAfter := notBefore.Add(lifetime)
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		URIs:         []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/" + r.Namespace + "/sa/" + r.Spec.ServiceAccountName}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca.Cert, csr.PublicKey, s.ca.Key)
	if err != nil {
		return err
	}
	r = r.DeepCopy()
	r.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue, Reason: "Issued", Message: "issued", LastTransitionTime: metav1.Now()}},
		CertificateChain: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore:        ptr.To(metav1.NewTime(notBefore)),
		BeginRefreshAt:   ptr.To(metav1.NewTime(notBefore.Add(s.refresh(lifetime)))),
		NotAfter:         ptr.To(metav1.NewTime(notAfter)),
	}
	if _, err := suite.client.CertificatesV1().PodCertificateRequests(r.Namespace).UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s.mu.Lock()
	s.issued = append(s.issued, r)
	s.mu.Unlock()
	return nil
}

func (s *testSigner) requests() []*certificatesv1.PodCertificateRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*certificatesv1.PodCertificateRequest(nil), s.issued...)
}

// leaf parses the first certificate of a PEM file's content.
func leaf(t *testing.T, data string) *x509.Certificate {
	t.Helper()
	certs, err := certutil.ParseCertsPEM([]byte(data))
	if err != nil || len(certs) == 0 {
		t.Fatalf("no certificate in %q: %v", data, err)
	}
	return certs[0]
}

// podCertificate is a pod with a podCertificate volume, its signer, and what
// the signer first issued to it.
type podCertificate struct {
	pod    string
	signer *testSigner
	// stop stops the signer and deletes the pod.
	stop  func()
	first *x509.Certificate
	key   string
}

// issuedPodCertificate is the pod TestPodCertificateVolume made, which
// TestPodCertificateRenewal watches renew while the rest of the suite runs.
var issuedPodCertificate *podCertificate

// TestPodCertificateVolume: a projected podCertificate source gets a key
// and a certificate for it from the signer, through a request naming the
// pod, its service account and the node; the certificate lasts
// maxExpirationSeconds. Its renewal is TestPodCertificateRenewal's.
func TestPodCertificateVolume(t *testing.T) {
	issuedPodCertificate = issuePodCertificate(t, "podcert")
}

// issuePodCertificate runs a signer and a pod named name with a
// podCertificate volume, and checks the certificate the pod gets. The
// signer runs until the returned stop: the first certificate is to be
// renewed as soon as the apiserver allows, 10 minutes after its notBefore
// (some 5.5 minutes from the start), the next ones later.
func issuePodCertificate(t *testing.T, name string) *podCertificate {
	ctx, cancel := context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			cancel()
		}
	}()
	authority := testpki.NewCA("e2e-pod-certificates")
	var calls int
	signer := &testSigner{name: "e2e.trireme.dev/" + suite.nodeName + "-" + name, ca: authority, refresh: func(time.Duration) time.Duration {
		calls++
		if calls == 1 {
			return 10 * time.Minute
		}
		return 40 * time.Minute
	}}
	if err := signer.run(ctx); err != nil {
		t.Fatal(err)
	}

	pod := boundPod(name, corev1.Container{
		Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"},
		VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/run/tls"}},
	})
	pod.Spec.Volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
		PodCertificate: &corev1.PodCertificateProjection{
			SignerName: signer.name, KeyType: "ECDSAP256", MaxExpirationSeconds: ptr.To[int32](3600),
			CredentialBundlePath: "creds.pem", KeyPath: "tls.key", CertificateChainPath: "tls.crt",
			UserAnnotations: map[string]string{"example.com/purpose": "e2e"},
		},
	}}}}}}
	// Not createPod: the pod outlives this test, until the renewal's ends.
	created, err := suite.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	stop := func() {
		cancel()
		err := suite.client.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete pod %s: %v", pod.Name, err)
		}
	}
	defer func() {
		if !ok {
			stop()
		}
	}()
	p := waitPod(t, pod.Name, 60*time.Second, "Running and Ready", isReady)
	if err := signer.err(); err != nil {
		t.Fatal(err)
	}

	reqs := signer.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the signer")
	}
	node, err := suite.client.CoreV1().Nodes().Get(ctx, suite.nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := suite.client.CoreV1().ServiceAccounts("default").Get(ctx, p.Spec.ServiceAccountName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := reqs[0].Spec
	if spec.PodName != pod.Name || spec.PodUID != created.UID || string(spec.NodeName) != suite.nodeName || spec.NodeUID != node.UID ||
		spec.ServiceAccountName != sa.Name || spec.ServiceAccountUID != sa.UID || ptr.Deref(spec.MaxExpirationSeconds, 0) != 3600 ||
		spec.UnverifiedUserAnnotations["example.com/purpose"] != "e2e" {
		t.Errorf("request spec %+v does not name the pod, node and service account", spec)
	}

	bundle, key, chain := readPodFile(t, name, "/run/tls/creds.pem"), readPodFile(t, name, "/run/tls/tls.key"), readPodFile(t, name, "/run/tls/tls.crt")
	if bundle != key+chain || !strings.Contains(key, "PRIVATE KEY") {
		t.Fatalf("credential bundle %q is not the key %q then the chain %q", bundle, key, chain)
	}
	first := leaf(t, chain)
	if got := first.NotAfter.Sub(first.NotBefore); got != time.Hour {
		t.Errorf("certificate lasts %s, want maxExpirationSeconds' hour", got)
	}
	kb, _ := pem.Decode([]byte(key))
	priv, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(first.PublicKey) {
		t.Error("the key is not the certified one")
	}
	ok = !t.Failed()
	return &podCertificate{pod: name, signer: signer, stop: stop, first: first, key: key}
}

// readPodFile is a file's content in a pod's container.
func readPodFile(t *testing.T, pod, path string) string {
	t.Helper()
	return suite.srv.Kubectl(t, "exec", pod, "--", "cat", path).Stdout
}

// TestPodCertificateRenewal: from the certificate's beginRefreshAt the
// kubelet asks for a new one and writes it and its new key in place, with
// no container restart. The wait, some 5.5 minutes that the apiserver's
// rules impose, runs in parallel with the rest of the suite, on the pod
// TestPodCertificateVolume made (or on one of its own when run alone).
func TestPodCertificateRenewal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not waiting some 6 minutes for a renewal")
	}
	pc := issuedPodCertificate
	if pc == nil {
		pc = issuePodCertificate(t, "podcert-renewal")
	}
	t.Cleanup(pc.stop)
	t.Parallel()
	var renewed *x509.Certificate
	err := waitFor(context.Background(), 8*time.Minute, func() (bool, error) {
		if len(pc.signer.requests()) < 2 {
			return false, nil
		}
		c := leaf(t, readPodFile(t, pc.pod, "/run/tls/tls.crt"))
		if c.SerialNumber.Cmp(pc.first.SerialNumber) != 0 {
			renewed = c
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("certificate not renewed after its beginRefreshAt: %v (%d requests)", err, len(pc.signer.requests()))
	}
	if err := pc.signer.err(); err != nil {
		t.Error(err)
	}
	if newKey := readPodFile(t, pc.pod, "/run/tls/tls.key"); newKey == pc.key {
		t.Error("the renewal kept the old key")
	}
	if p, err := suite.client.CoreV1().Pods("default").Get(context.Background(), pc.pod, metav1.GetOptions{}); err != nil || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("container restarted by the renewal (%v)", err)
	}
	t.Logf("renewed: serial %s -> %s", pc.first.SerialNumber, renewed.SerialNumber)
}

// TestPodCertificateNotIssued: until a certificate is issued the pod does
// not start, and its events say why.
func TestPodCertificateNotIssued(t *testing.T) {
	ctx := context.Background()
	pod := boundPod("podcert-waiting", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}, VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/run/tls"}}})
	pod.Spec.Volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
		PodCertificate: &corev1.PodCertificateProjection{SignerName: "e2e.trireme.dev/nobody", KeyType: "ED25519", CredentialBundlePath: "creds.pem"},
	}}}}}}
	createPod(t, pod)
	var msgs []string
	err := waitFor(ctx, 30*time.Second, func() (bool, error) {
		events, err := suite.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=podcert-waiting,reason=FailedMount"})
		if err != nil {
			return false, nil
		}
		msgs = msgs[:0]
		for _, e := range events.Items {
			msgs = append(msgs, e.Message)
		}
		return strings.Contains(strings.Join(msgs, "\n"), "credential bundle is not issued yet"), nil
	})
	if err != nil {
		t.Errorf("no FailedMount event saying the certificate is not issued: %q", msgs)
	}
	reqs, err := suite.client.CertificatesV1().PodCertificateRequests("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.podName=podcert-waiting"})
	if err != nil || len(reqs.Items) != 1 {
		n := -1
		if reqs != nil {
			n = len(reqs.Items)
		}
		t.Errorf("%d requests (%v), want the one awaited", n, err)
	} else if m := ptr.Deref(reqs.Items[0].Spec.MaxExpirationSeconds, 0); m != 86400 {
		t.Errorf("maxExpirationSeconds %d, want the default day", m)
	}
	if p, err := suite.client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodPending {
		t.Errorf("pod %v (%v), want Pending", p.Status.Phase, err)
	}
}
