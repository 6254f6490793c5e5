// Package podcertificate issues the credentials of podCertificate
// projected volume sources, as upstream's kubelet does: for each source of
// each pod it makes a private key, asks the source's signer for a
// certificate with a PodCertificateRequest (whose stub PKCS#10 request
// proves possession of the key and whose spec names the pod, its service
// account and the node, by name and UID), waits for the signer to issue
// it, and from the certificate's beginRefreshAt on asks again with a new
// key, keeping the old credentials until the new ones are issued.
package podcertificate

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// assumeDeletedAfter is how long a request created but never seen is
// waited for (the informer may lag) before it is taken for deleted and
// made again, as upstream.
const assumeDeletedAfter = 10 * time.Minute

// overdueAfter is how long past beginRefreshAt a certificate that was not
// renewed is reported overdue, as upstream.
const overdueAfter = 10 * time.Minute

// ErrNotIssued is returned while a source's first certificate is awaited.
var ErrNotIssued = errors.New("credential bundle is not issued yet")

// Config is what a Manager works with.
type Config struct {
	// Client creates the requests and reads service accounts and the node.
	Client kubernetes.Interface
	// NodeName is this node.
	NodeName string
	// Recorder records the events of denied, failed and expired
	// certificates on their pods.
	Recorder record.EventRecorder
	// Wake asks for a sync of the pod with this UID, made when one of its
	// requests changes so that issued credentials are written at once.
	Wake func(types.UID)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Requests reads the node's requests; nil makes an informer of them,
	// which Run runs.
	Requests Requests
}

// Requests reads PodCertificateRequests from a cache.
type Requests interface {
	// Get returns a request, or a NotFound error.
	Get(namespace, name string) (*certificatesv1.PodCertificateRequest, error)
}

// Manager keeps the credentials of the node's podCertificate sources.
// Credentials drives each source's state forward when its pod's volumes
// are set up (on every pod sync); the pod is woken when its requests
// change.
type Manager struct {
	cfg      Config
	informer cache.SharedIndexInformer

	mu      sync.Mutex
	sources map[sourceKey]*source
	nodeUID types.UID
}

// sourceKey names one podCertificate source of one pod.
type sourceKey struct {
	pod    types.UID
	volume string
	index  int
}

// source is the state of one podCertificate source: its credentials once
// issued, the request awaited (the first, or a renewal), or the end of a
// denied or failed request.
type source struct {
	// key and chain are the issued credentials, PEM, with the times the
	// certificate is to be renewed and expires.
	key, chain               []byte
	beginRefreshAt, notAfter time.Time
	// pendingKey and pending are the key and name of the request awaited,
	// given up as deleted at abandonAt.
	pendingKey []byte
	pending    string
	abandonAt  time.Time
	// final ends the source: the request was denied or failed.
	final error
	// overdue and expired are set once their event is recorded.
	overdue, expired bool
	// renew wakes the pod at beginRefreshAt, so that the renewal is asked
	// for then rather than at its next periodic sync.
	renew *time.Timer
}

// New returns a manager; Run starts its informer when it made one.
func New(cfg Config) *Manager {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &Manager{cfg: cfg, sources: map[sourceKey]*source{}}
	if cfg.Requests == nil {
		// The node authorizer lets a kubelet list and watch only the
		// requests naming its node.
		m.informer = certinformers.NewFilteredPodCertificateRequestInformer(cfg.Client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", cfg.NodeName).String()
			})
		lister := certlisters.NewPodCertificateRequestLister(m.informer.GetIndexer())
		m.cfg.Requests = listerRequests{lister}
		wake := func(obj any) {
			if r, ok := obj.(*certificatesv1.PodCertificateRequest); ok && cfg.Wake != nil {
				cfg.Wake(r.Spec.PodUID)
			}
		}
		_, _ = m.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: wake, UpdateFunc: func(_, obj any) { wake(obj) }})
	}
	return m
}

// listerRequests reads requests from the informer's lister.
type listerRequests struct {
	lister certlisters.PodCertificateRequestLister
}

func (l listerRequests) Get(namespace, name string) (*certificatesv1.PodCertificateRequest, error) {
	return l.lister.PodCertificateRequests(namespace).Get(name)
}

// Run runs the informer of the node's requests until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	if m.informer != nil {
		m.informer.RunWithContext(ctx)
	}
}

// Credentials returns the private key and certificate chain (both PEM) of
// source index of the projected volume of pod, moving the source on: it
// makes the first request, takes an issued certificate, and asks for a
// new one once the current one is due for renewal. Before the first
// certificate is issued it returns ErrNotIssued; a denied or failed
// request is an error for good, as upstream.
func (m *Manager) Credentials(ctx context.Context, pod *corev1.Pod, volume string, index int, p *corev1.PodCertificateProjection) ([]byte, []byte, error) {
	k := sourceKey{pod: pod.UID, volume: volume, index: index}
	m.mu.Lock()
	s := m.sources[k]
	if s == nil {
		s = &source{}
		m.sources[k] = s
	}
	m.mu.Unlock()
	// Sources of one pod are set up by its one worker, so s is not
	// shared; the lock only guards the map.
	if s.final != nil {
		return nil, nil, s.final
	}
	now := m.cfg.Now()
	if s.pending != "" {
		if err := m.check(pod, s, now); err != nil {
			return nil, nil, err
		}
	}
	if s.pending == "" && (s.chain == nil || !now.Before(s.beginRefreshAt)) {
		if s.chain != nil {
			logr.FromContextOrDiscard(ctx).V(2).Info("Renewing pod certificate", "pod", pod.Namespace+"/"+pod.Name, "volume", volume, "beginRefreshAt", s.beginRefreshAt)
		}
		if err := m.request(ctx, pod, s, p); err != nil {
			if s.chain == nil {
				return nil, nil, err
			}
			logr.FromContextOrDiscard(ctx).Error(err, "Renew pod certificate failed; keeping the current one", "pod", pod.Namespace+"/"+pod.Name, "volume", volume)
		}
	}
	if s.chain == nil {
		return nil, nil, ErrNotIssued
	}
	m.reportAge(pod, s, now)
	return s.key, s.chain, nil
}

// check moves s on when its pending request has ended.
func (m *Manager) check(pod *corev1.Pod, s *source, now time.Time) error {
	r, err := m.cfg.Requests.Get(pod.Namespace, s.pending)
	if apierrors.IsNotFound(err) {
		if now.After(s.abandonAt) {
			// Made again at once by the caller.
			s.pending, s.pendingKey = "", nil
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get PodCertificateRequest %s/%s: %w", pod.Namespace, s.pending, err)
	}
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued:
			if r.Status.BeginRefreshAt == nil || r.Status.NotAfter == nil {
				return fmt.Errorf("PodCertificateRequest %s/%s is issued without beginRefreshAt and notAfter", r.Namespace, r.Name)
			}
			s.key, s.chain = s.pendingKey, cleanChain([]byte(r.Status.CertificateChain))
			s.beginRefreshAt, s.notAfter = r.Status.BeginRefreshAt.Time, r.Status.NotAfter.Time
			s.pending, s.pendingKey = "", nil
			s.overdue, s.expired = false, false
			m.wakeAt(pod.UID, s, s.beginRefreshAt)
			return nil
		case certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			state, verb := "denied", "was denied"
			if c.Type == certificatesv1.PodCertificateRequestConditionTypeFailed {
				state, verb = "failed", "failed"
			}
			s.final = fmt.Errorf("PodCertificateRequest was permanently %s: reason=%q message=%q", state, c.Reason, c.Message)
			m.event(pod, corev1.EventTypeWarning, c.Type, fmt.Sprintf("PodCertificateRequest %s/%s %s, reason=%q, message=%q", r.Namespace, r.Name, verb, c.Reason, c.Message))
			return s.final
		}
	}
	return nil
}

// wakeAt has the pod woken at t, in place of an earlier wake-up of s.
func (m *Manager) wakeAt(uid types.UID, s *source, t time.Time) {
	if m.cfg.Wake == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.renew != nil {
		s.renew.Stop()
	}
	wake := m.cfg.Wake
	s.renew = time.AfterFunc(t.Sub(m.cfg.Now()), func() { wake(uid) })
}

// reportAge records, once each, that the certificate is overdue for
// renewal and that it expired.
func (m *Manager) reportAge(pod *corev1.Pod, s *source, now time.Time) {
	if !s.overdue && now.After(s.beginRefreshAt.Add(overdueAfter)) {
		s.overdue = true
		m.event(pod, corev1.EventTypeWarning, "CertificateOverdueForRefresh", "PodCertificate refresh overdue")
	}
	if !s.expired && now.After(s.notAfter) {
		s.expired = true
		m.event(pod, corev1.EventTypeWarning, "CertificateExpired", "PodCertificate expired")
	}
}

func (m *Manager) event(pod *corev1.Pod, typ, reason, msg string) {
	if m.cfg.Recorder != nil {
		m.cfg.Recorder.Event(pod, typ, reason, msg)
	}
}

// request makes a key and the PodCertificateRequest for it, and makes it
// s's pending request.
func (m *Manager) request(ctx context.Context, pod *corev1.Pod, s *source, p *corev1.PodCertificateProjection) error {
	sa, err := m.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, pod.Spec.ServiceAccountName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("while fetching service account: %w", err)
	}
	nodeUID, err := m.node(ctx)
	if err != nil {
		return err
	}
	key, csr, err := newKey(p.KeyType)
	if err != nil {
		return fmt.Errorf("while generating keypair: %w", err)
	}
	r := &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       pod.Namespace,
			GenerateName:    "req-",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}},
		},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName:                p.SignerName,
			PodName:                   pod.Name,
			PodUID:                    pod.UID,
			ServiceAccountName:        pod.Spec.ServiceAccountName,
			ServiceAccountUID:         sa.UID,
			NodeName:                  types.NodeName(m.cfg.NodeName),
			NodeUID:                   nodeUID,
			MaxExpirationSeconds:      p.MaxExpirationSeconds,
			StubPKCS10Request:         csr,
			UnverifiedUserAnnotations: p.UserAnnotations,
		},
	}
	out, err := m.cfg.Client.CertificatesV1().PodCertificateRequests(pod.Namespace).Create(ctx, r, metav1.CreateOptions{})
	if err != nil {
		// The node may have been registered again: look its UID up anew.
		m.mu.Lock()
		m.nodeUID = ""
		m.mu.Unlock()
		return fmt.Errorf("while creating PodCertificateRequest: %w", err)
	}
	s.pendingKey, s.pending = key, out.Name
	s.abandonAt = m.cfg.Now().Add(assumeDeletedAfter)
	return nil
}

// node returns this node's UID, looked up once.
func (m *Manager) node(ctx context.Context) (types.UID, error) {
	m.mu.Lock()
	uid := m.nodeUID
	m.mu.Unlock()
	if uid != "" {
		return uid, nil
	}
	n, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("while getting node %s: %w", m.cfg.NodeName, err)
	}
	m.mu.Lock()
	m.nodeUID = n.UID
	m.mu.Unlock()
	return n.UID, nil
}

// Forget drops the sources of the pod with this UID (its requests go with
// the pod, which owns them).
func (m *Manager) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, s := range m.sources {
		if k.pod == uid {
			if s.renew != nil {
				s.renew.Stop()
			}
			delete(m.sources, k)
		}
	}
}

// newKey makes a private key of the type (PKCS#8 PEM) and the empty
// PKCS#10 request it signs, which proves its possession.
func newKey(keyType string) ([]byte, []byte, error) {
	var key crypto.Signer
	var err error
	switch keyType {
	case "RSA3072":
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q", keyType)
	}
	if err != nil {
		return nil, nil, err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("stub PKCS#10 request: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), csr, nil
}

// cleanChain keeps only the PEM blocks of the chain, as CERTIFICATE blocks
// without headers: a signer's text between them is not the pod's.
func cleanChain(in []byte) []byte {
	var out bytes.Buffer
	for {
		var b *pem.Block
		b, in = pem.Decode(in)
		if b == nil {
			return out.Bytes()
		}
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
	}
}
