package podcertificate

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// world is a fake apiserver holding the node, a pod's service account
// and the requests the manager makes, with a signer the test drives.
type world struct {
	t        *testing.T
	client   *fake.Clientset
	requests map[string]*certificatesv1.PodCertificateRequest
	order    []string
	now      time.Time
	events   *record.FakeRecorder
	m        *Manager
	ca       *x509.Certificate
	caKey    crypto.Signer
}

func (w *world) Get(namespace, name string) (*certificatesv1.PodCertificateRequest, error) {
	if r, ok := w.requests[namespace+"/"+name]; ok {
		return r, nil
	}
	return nil, apierrors.NewNotFound(certificatesv1.Resource("podcertificaterequests"), name)
}

func newWorld(t *testing.T) *world {
	w := &world{
		t:        t,
		requests: map[string]*certificatesv1.PodCertificateRequest{},
		now:      time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		events:   record.NewFakeRecorder(10),
	}
	w.client = fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "sa-uid"}},
	)
	// The fake gives no generated names: the reactor does, and keeps what
	// was created where the manager's cache reads it.
	w.client.PrependReactor("create", "podcertificaterequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		r := a.(clienttesting.CreateAction).GetObject().(*certificatesv1.PodCertificateRequest).DeepCopy()
		r.Name = fmt.Sprintf("%s%d", r.GenerateName, len(w.order))
		w.requests[r.Namespace+"/"+r.Name] = r
		w.order = append(w.order, r.Namespace+"/"+r.Name)
		return true, r, nil
	})
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: w.now.Add(-time.Hour), NotAfter: w.now.Add(365 * 24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	w.ca, _ = x509.ParseCertificate(der)
	w.caKey = key
	w.m = New(Config{Client: w.client, NodeName: "node-1", Recorder: w.events, Now: func() time.Time { return w.now }, Requests: w})
	return w
}

// last is the request made last.
func (w *world) last() *certificatesv1.PodCertificateRequest {
	w.t.Helper()
	if len(w.order) == 0 {
		w.t.Fatal("no request made")
	}
	return w.requests[w.order[len(w.order)-1]]
}

// issue signs the last request's key for lifetime, to be renewed from
// refresh on; the chain has text between its blocks, as a signer may.
func (w *world) issue(lifetime, refresh time.Duration) []byte {
	w.t.Helper()
	r := w.last()
	csr, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request)
	if err != nil {
		w.t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(len(w.order)) + 1), NotBefore: w.now, NotAfter: w.now.Add(lifetime)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, w.ca, csr.PublicKey, w.caKey)
	if err != nil {
		w.t.Fatal(err)
	}
	leaf, ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.ca.Raw})
	clean := append(leaf, ca...)
	r.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue, Reason: "Issued"}},
		CertificateChain: "leaf\n" + string(leaf) + "between\n" + string(ca),
		NotBefore:        ptr.To(metav1.NewTime(w.now)),
		BeginRefreshAt:   ptr.To(metav1.NewTime(w.now.Add(refresh))),
		NotAfter:         ptr.To(metav1.NewTime(w.now.Add(lifetime))),
	}
	// What a pod sees: the blocks alone.
	return clean
}

var (
	testPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "pod-uid"}, Spec: corev1.PodSpec{ServiceAccountName: "app", NodeName: "node-1"}}
	testSrc = &corev1.PodCertificateProjection{SignerName: "example.com/mesh", KeyType: "ECDSAP256", MaxExpirationSeconds: ptr.To[int32](3600),
		UserAnnotations: map[string]string{"example.com/path": "/web"}, CredentialBundlePath: "creds.pem"}
)

func (w *world) credentials() ([]byte, []byte, error) {
	return w.m.Credentials(context.Background(), testPod, "tls", 1, testSrc)
}

// keyMatches reports whether the PEM key is the one the certificate at
// the head of the chain certifies.
func keyMatches(t *testing.T, keyPEM, chain []byte) bool {
	t.Helper()
	kb, _ := pem.Decode(keyPEM)
	cb, _ := pem.Decode(chain)
	if kb == nil || cb == nil {
		t.Fatalf("key or chain is not PEM")
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return key.(*ecdsa.PrivateKey).PublicKey.Equal(cert.PublicKey)
}

func TestFirstRequest(t *testing.T) {
	w := newWorld(t)
	if _, _, err := w.credentials(); !errors.Is(err, ErrNotIssued) {
		t.Fatalf("before issuance: %v, want ErrNotIssued", err)
	}
	r := w.last()
	want := certificatesv1.PodCertificateRequestSpec{
		SignerName: "example.com/mesh", PodName: "web", PodUID: "pod-uid", ServiceAccountName: "app", ServiceAccountUID: "sa-uid",
		NodeName: "node-1", NodeUID: "node-uid", MaxExpirationSeconds: ptr.To[int32](3600), UnverifiedUserAnnotations: map[string]string{"example.com/path": "/web"},
	}
	got := r.Spec
	got.StubPKCS10Request = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec\n %+v\nwant\n %+v", got, want)
	}
	if r.GenerateName != "req-" || len(r.OwnerReferences) != 1 || r.OwnerReferences[0].UID != "pod-uid" || r.OwnerReferences[0].Kind != "Pod" {
		t.Errorf("metadata %+v: want generateName req- and the pod as owner", r.ObjectMeta)
	}
	csr, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request)
	if err != nil || csr.CheckSignature() != nil {
		t.Fatalf("stub request does not prove possession: %v", err)
	}
	if _, _, err := w.credentials(); !errors.Is(err, ErrNotIssued) || len(w.order) != 1 {
		t.Fatalf("while pending: %v with %d requests, want ErrNotIssued and no new request", err, len(w.order))
	}
	chain := w.issue(time.Hour, 30*time.Minute)
	key, gotChain, err := w.credentials()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotChain, chain) {
		t.Errorf("chain not cleaned of the text between blocks:\n%s", gotChain)
	}
	if !keyMatches(t, key, gotChain) {
		t.Error("key is not the certified one")
	}
	if pub, ok := csr.PublicKey.(*ecdsa.PublicKey); !ok || !keyMatches(t, key, chain) || pub.Curve != elliptic.P256() {
		t.Error("key is not an ECDSA P-256 key, as asked")
	}
}

func TestRenewal(t *testing.T) {
	w := newWorld(t)
	_, _, _ = w.credentials()
	w.issue(time.Hour, 30*time.Minute)
	firstKey, firstChain, err := w.credentials()
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name         string
		advance      time.Duration
		issue        bool
		wantRequests int
		wantFirst    bool
	}{
		{name: "before beginRefreshAt nothing is asked", advance: 29 * time.Minute, wantRequests: 1, wantFirst: true},
		{name: "at beginRefreshAt a new key is asked for, the old credentials stay", advance: time.Minute, wantRequests: 2, wantFirst: true},
		{name: "while the renewal is pending nothing more is asked", advance: time.Minute, wantRequests: 2, wantFirst: true},
		{name: "the renewed credentials replace the old", issue: true, wantRequests: 2},
	}
	for _, st := range steps {
		w.now = w.now.Add(st.advance)
		if st.issue {
			w.issue(time.Hour, 30*time.Minute)
		}
		key, chain, err := w.credentials()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if len(w.order) != st.wantRequests {
			t.Errorf("%s: %d requests, want %d", st.name, len(w.order), st.wantRequests)
		}
		if first := bytes.Equal(key, firstKey) && bytes.Equal(chain, firstChain); first != st.wantFirst {
			t.Errorf("%s: first credentials = %v, want %v", st.name, first, st.wantFirst)
		}
		if !keyMatches(t, key, chain) {
			t.Errorf("%s: key and certificate do not match", st.name)
		}
	}
}

func TestEndings(t *testing.T) {
	tests := []struct {
		name       string
		condition  string
		wantErr    string
		wantEvent  string
		wantSecond bool
	}{
		{name: "denied", condition: certificatesv1.PodCertificateRequestConditionTypeDenied,
			wantErr:   `PodCertificateRequest was permanently denied: reason="UnsupportedKeyType" message="no"`,
			wantEvent: `Warning Denied PodCertificateRequest ns/req-0 was denied, reason="UnsupportedKeyType", message="no"`},
		{name: "failed", condition: certificatesv1.PodCertificateRequestConditionTypeFailed,
			wantErr:   `PodCertificateRequest was permanently failed: reason="UnsupportedKeyType" message="no"`,
			wantEvent: `Warning Failed PodCertificateRequest ns/req-0 failed, reason="UnsupportedKeyType", message="no"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			_, _, _ = w.credentials()
			w.last().Status.Conditions = []metav1.Condition{{Type: tc.condition, Status: metav1.ConditionTrue, Reason: "UnsupportedKeyType", Message: "no"}}
			for i := 0; i < 2; i++ {
				if _, _, err := w.credentials(); err == nil || err.Error() != tc.wantErr {
					t.Fatalf("call %d: %v, want %q", i, err, tc.wantErr)
				}
			}
			if len(w.order) != 1 {
				t.Errorf("%d requests: an ended source asks no more", len(w.order))
			}
			if got := <-w.events.Events; got != tc.wantEvent {
				t.Errorf("event %q, want %q", got, tc.wantEvent)
			}
			select {
			case e := <-w.events.Events:
				t.Errorf("second event %q", e)
			default:
			}
		})
	}
}

func TestDeletedRequestIsMadeAgain(t *testing.T) {
	w := newWorld(t)
	_, _, _ = w.credentials()
	delete(w.requests, w.order[0])
	w.now = w.now.Add(time.Minute)
	if _, _, _ = w.credentials(); len(w.order) != 1 {
		t.Fatalf("%d requests: a request not seen yet may be the cache's lag", len(w.order))
	}
	w.now = w.now.Add(assumeDeletedAfter)
	if _, _, _ = w.credentials(); len(w.order) != 2 {
		t.Fatalf("%d requests: a request gone for long is made again", len(w.order))
	}
}

func TestAgeEvents(t *testing.T) {
	w := newWorld(t)
	_, _, _ = w.credentials()
	w.issue(time.Hour, 30*time.Minute)
	_, _, _ = w.credentials()
	// The renewal is never issued.
	w.now = w.now.Add(41 * time.Minute)
	_, _, _ = w.credentials()
	w.now = w.now.Add(20 * time.Minute)
	_, _, _ = w.credentials()
	_, _, _ = w.credentials()
	var got []string
	for len(w.events.Events) > 0 {
		got = append(got, <-w.events.Events)
	}
	want := []string{"Warning CertificateOverdueForRefresh PodCertificate refresh overdue", "Warning CertificateExpired PodCertificate expired"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q, each once", got, want)
	}
}

func TestForget(t *testing.T) {
	w := newWorld(t)
	_, _, _ = w.credentials()
	w.m.Forget(testPod.UID)
	if _, _, _ = w.credentials(); len(w.order) != 2 {
		t.Errorf("%d requests: a forgotten pod's source starts over", len(w.order))
	}
}

func TestNewKey(t *testing.T) {
	for _, keyType := range []string{"RSA3072", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"} {
		t.Run(keyType, func(t *testing.T) {
			keyPEM, csrDER, err := newKey(keyType)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := pem.Decode(keyPEM)
			if b == nil || b.Type != "PRIVATE KEY" {
				t.Fatalf("key is not a PKCS#8 PEM block: %q", keyPEM)
			}
			key, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			csr, err := x509.ParseCertificateRequest(csrDER)
			if err != nil || csr.CheckSignature() != nil {
				t.Fatalf("stub request: %v", err)
			}
			if !key.(interface{ Public() crypto.PublicKey }).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(csr.PublicKey) {
				t.Error("request is not for the key")
			}
		})
	}
	if _, _, err := newKey("DSA"); err == nil {
		t.Error("unknown key type accepted")
	}
}

func TestWakeAtBeginRefreshAt(t *testing.T) {
	w := newWorld(t)
	woken := make(chan types.UID, 1)
	w.m.cfg.Wake = func(uid types.UID) { woken <- uid }
	_, _, _ = w.credentials()
	w.issue(time.Hour, 50*time.Millisecond)
	if _, _, err := w.credentials(); err != nil {
		t.Fatal(err)
	}
	select {
	case uid := <-woken:
		if uid != testPod.UID {
			t.Errorf("woke %s, want the pod", uid)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pod not woken at beginRefreshAt")
	}
	w.issue(time.Hour, 50*time.Millisecond)
	w.now = w.now.Add(time.Second)
	_, _, _ = w.credentials()
	w.issue(time.Hour, 100*time.Millisecond)
	_, _, _ = w.credentials()
	w.m.Forget(testPod.UID)
	select {
	case <-woken:
		t.Error("a forgotten pod was woken")
	case <-time.After(300 * time.Millisecond):
	}
}
