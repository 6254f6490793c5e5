package kubelet_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
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
}

func (s *testSigner) run(ctx context.Context, t *testing.T) {
	w, err := suite.client.CertificatesV1().PodCertificateRequests("").Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.signerName", s.name).String(),
	})
	if err != nil {
		t.Errorf("watch pod certificate requests: %v", err)
		return
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			r, ok := ev.Object.(*certificatesv1.PodCertificateRequest)
			if !ok || ev.Type != watch.Added || len(r.Status.Conditions) > 0 {
				continue
			}
			if err := s.issue(ctx, r); err != nil && ctx.Err() == nil {
				t.Errorf("issue %s/%s: %v", r.Namespace, r.Name, err)
			}
		}
	}()
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

// TestPodCertificateVolume: a projected podCertificate source gets a key
// and a certificate for it from the signer, through a request naming the
// pod, its service account and the node; the certificate lasts
// maxExpirationSeconds, and from its beginRefreshAt the kubelet asks for a
// new one and writes it in place.
func TestPodCertificateVolume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	authority := testpki.NewCA("e2e-pod-certificates")
	// The first certificate is to be renewed as soon as the apiserver
	// allows, 10 minutes after its notBefore (some 5.5 minutes from now),
	// the next ones later.
	var calls int
	signer := &testSigner{name: "e2e.trireme.dev/" + suite.nodeName, ca: authority, refresh: func(time.Duration) time.Duration {
		calls++
		if calls == 1 {
			return 10 * time.Minute
		}
		return 40 * time.Minute
	}}
	signer.run(ctx, t)

	pod := boundPod("podcert", corev1.Container{
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
	created := createPod(t, pod)
	p := waitPod(t, pod.Name, 60*time.Second, "Running and Ready", isReady)

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

	read := func(name string) string {
		t.Helper()
		r := suite.srv.Kubectl(t, "exec", pod.Name, "--", "cat", "/run/tls/"+name)
		return r.Stdout
	}
	bundle, key, chain := read("creds.pem"), read("tls.key"), read("tls.crt")
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

	// Renewal: a second request, and a new certificate in place.
	if testing.Short() {
		t.Log("-short: not waiting some 6 minutes for the renewal")
		return
	}
	var renewed *x509.Certificate
	err = waitFor(ctx, 8*time.Minute, func() (bool, error) {
		if len(signer.requests()) < 2 {
			return false, nil
		}
		c := leaf(t, read("tls.crt"))
		if c.SerialNumber.Cmp(first.SerialNumber) != 0 {
			renewed = c
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("certificate not renewed after its beginRefreshAt: %v (%d requests)", err, len(signer.requests()))
	}
	if newKey := read("tls.key"); newKey == key {
		t.Error("the renewal kept the old key")
	}
	if p, err := suite.client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{}); err != nil || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("container restarted by the renewal (%v)", err)
	}
	t.Logf("renewed: serial %s -> %s", first.SerialNumber, renewed.SerialNumber)
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
