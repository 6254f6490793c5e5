// Package csrsigning is the controller that signs approved CSRs of the
// kubernetes.io signers with the cluster CA (or a signer's own CA):
// kube-apiserver-client, kube-apiserver-client-kubelet, kubelet-serving and
// legacy-unknown. A request the signer may not issue is marked Failed.
package csrsigning

import (
	"context"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/certificates"
	"trireme.dev/controller-manager/internal/metrics"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "csrsigning"

// DefaultMaxTTL is upstream's --cluster-signing-duration.
const DefaultMaxTTL = 365 * 24 * time.Hour

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes the signed certificates and Failed conditions.
	Client kubernetes.Interface
	// CSRs is the shared CSR informer; New registers its handlers.
	CSRs certinformers.CertificateSigningRequestInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// CAs are the CAs to sign with, by signer name; requests for other
	// signers are left alone.
	CAs map[string]*CA
	// MaxTTL is the longest validity of a certificate it issues
	// (--cluster-signing-duration); a CSR's spec.expirationSeconds may ask
	// for less. 0 means DefaultMaxTTL (one year).
	MaxTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller signs CSRs. Its queue holds CSR names.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	csrs     certlisters.CertificateSigningRequestLister
	synced   cache.InformerSynced
	loop     *worker.Loop
	cas      map[string]*CA
	maxTTL   time.Duration
	now      func() time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.MaxTTL <= 0 {
		o.MaxTTL = DefaultMaxTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		csrs:   o.CSRs.Lister(),
		synced: o.CSRs.Informer().HasSynced,
		cas:    o.CAs, maxTTL: o.MaxTTL, now: o.Now,
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.CSRs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch certificatesigningrequests: %w", err)
	}
	return c, nil
}

// Run signs with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced)
}

func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get csr %s: %w", name, err)
	}
	ca := c.cas[csr.Spec.SignerName]
	if ca == nil || !certificates.Approved(csr) || certificates.Denied(csr) || certificates.Failed(csr) || len(csr.Status.Certificate) > 0 {
		return nil
	}
	req, err := certificates.ParseRequest(csr)
	if err == nil {
		err = validate(csr, req)
	}
	csr = csr.DeepCopy()
	if err != nil {
		c.recorder.Eventf(csr, corev1.EventTypeWarning, "SignerValidationFailure", "Not signing: %v", err)
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue,
			Reason: "SignerValidationFailure", Message: err.Error(),
			LastUpdateTime: metav1.Now(),
		})
	} else {
		ttl := c.maxTTL
		if s := csr.Spec.ExpirationSeconds; s != nil && time.Duration(*s)*time.Second < ttl {
			ttl = time.Duration(*s) * time.Second
		}
		cert, err := ca.Sign(req, csr.Spec.Usages, ttl, c.now())
		if err != nil {
			return fmt.Errorf("sign csr %s: %w", name, err)
		}
		csr.Status.Certificate = cert
	}
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("update status of csr %s: %w", name, err)
	}
	if len(csr.Status.Certificate) > 0 {
		metrics.CSR(csr.Spec.SignerName, "signed")
	}
	logr.FromContextOrDiscard(ctx).V(2).Info("Signed CSR", "csr", name, "signer", csr.Spec.SignerName)
	return nil
}

// validate checks the request against its signer's rules; legacy-unknown
// has none.
func validate(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) error {
	switch csr.Spec.SignerName {
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		return certificates.ValidateKubeletClient(req, csr.Spec.Usages)
	case certificatesv1.KubeletServingSignerName:
		return certificates.ValidateKubeletServing(req, csr.Spec.Usages)
	case certificatesv1.KubeAPIServerClientSignerName:
		return certificates.ValidateAPIServerClient(csr.Spec.Usages)
	}
	return nil
}
