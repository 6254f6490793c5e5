// Package csrapproving is the controller that approves kubelets' CSRs: a
// kubelet client certificate requested with a bootstrap token (or by any
// identity allowed certificatesigningrequests/nodeclient) or renewed by
// the node itself (certificatesigningrequests/selfnodeclient), checked with
// a SubjectAccessReview as upstream; and, beyond upstream, a node's own
// kubelet serving certificate whose DNS names and IPs are all among its
// Node's addresses, so serving-certificate rotation needs no administrator.
package csrapproving

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"slices"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/certificates"
	"trireme.dev/controller-manager/internal/metrics"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "csrapproving"

// Options configure the controller; every field is required.
type Options struct {
	// Client approves CSRs and creates SubjectAccessReviews.
	Client kubernetes.Interface
	// CSRs and Nodes are the shared informers; New registers its handlers
	// on both.
	CSRs  certinformers.CertificateSigningRequestInformer
	Nodes coreinformers.NodeInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
}

// Controller approves CSRs. Its queue holds CSR names.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	csrs     certlisters.CertificateSigningRequestLister
	nodes    corelisters.NodeLister
	synced   []cache.InformerSynced
	loop     *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		csrs:   o.CSRs.Lister(),
		nodes:  o.Nodes.Lister(),
		synced: []cache.InformerSynced{o.CSRs.Informer().HasSynced, o.Nodes.Informer().HasSynced},
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.CSRs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch certificatesigningrequests: %w", err)
	}
	// A serving CSR sent before its Node listed the addresses it names is
	// looked at again once the Node changes.
	if _, err := o.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.nodeChanged,
		UpdateFunc: func(_, obj any) { c.nodeChanged(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return c, nil
}

func (c *Controller) nodeChanged(obj any) {
	node, ok := worker.ObjectAs[*corev1.Node](obj)
	if !ok {
		return
	}
	csrs, err := c.csrs.List(labels.Everything())
	if err != nil {
		return
	}
	for _, csr := range csrs {
		if csr.Spec.SignerName == certificatesv1.KubeletServingSignerName && csr.Spec.Username == certificates.NodeUserPrefix+node.Name &&
			!certificates.Approved(csr) && !certificates.Denied(csr) {
			c.loop.Add(csr.Name)
		}
	}
}

// Run approves with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get csr %s: %w", name, err)
	}
	if certificates.Approved(csr) || certificates.Denied(csr) || len(csr.Status.Certificate) > 0 {
		return nil
	}
	var message string
	switch csr.Spec.SignerName {
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		message, err = c.kubeletClient(ctx, csr)
	case certificatesv1.KubeletServingSignerName:
		message, err = c.kubeletServing(csr)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	if message == "" {
		return nil // not ours to approve: left to an administrator
	}
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "AutoApproved", Message: message,
		LastUpdateTime: metav1.Now(),
	})
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("approve csr %s: %w", name, err)
	}
	metrics.CSR(csr.Spec.SignerName, "approved")
	logr.FromContextOrDiscard(ctx).Info("Approved CSR", "csr", name, "signer", csr.Spec.SignerName, "requester", csr.Spec.Username)
	return nil
}

// parse decodes the request, recording a Warning Event when it is
// malformed: such a CSR can never be approved and is not retried.
func (c *Controller) parse(csr *certificatesv1.CertificateSigningRequest) *x509.CertificateRequest {
	req, err := certificates.ParseRequest(csr)
	if err != nil {
		c.recorder.Eventf(csr, corev1.EventTypeWarning, "InvalidRequest", "Not auto-approving: %v", err)
		return nil
	}
	return req
}

// kubeletClient approves a kubelet client CSR when the requester may
// create one for itself (a renewal) or for any node (bootstrap).
func (c *Controller) kubeletClient(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (string, error) {
	req := c.parse(csr)
	if req == nil {
		return "", nil
	}
	if err := certificates.ValidateKubeletClient(req, csr.Spec.Usages); err != nil {
		return "", nil
	}
	if csr.Spec.Username == req.Subject.CommonName {
		ok, err := c.allowed(ctx, csr, "selfnodeclient")
		if err != nil || ok {
			return "Auto approving self kubelet client certificate after SubjectAccessReview.", err
		}
	}
	ok, err := c.allowed(ctx, csr, "nodeclient")
	if err != nil || !ok {
		return "", err
	}
	return "Auto approving kubelet client certificate after SubjectAccessReview.", nil
}

// allowed asks the apiserver whether the CSR's requester may create
// certificatesigningrequests/<subresource>.
func (c *Controller) allowed(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: certificatesv1.GroupName, Resource: "certificatesigningrequests",
			Subresource: subresource, Verb: "create",
		},
	}}
	got, err := c.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("subjectaccessreview for csr %s: %w", csr.Name, err)
	}
	return got.Status.Allowed, nil
}

// kubeletServing approves a node's own serving CSR when every DNS name and
// IP it asks for is one of that Node's addresses.
func (c *Controller) kubeletServing(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	req := c.parse(csr)
	if req == nil {
		return "", nil
	}
	if err := certificates.ValidateKubeletServing(req, csr.Spec.Usages); err != nil {
		return "", nil
	}
	if csr.Spec.Username != req.Subject.CommonName || !slices.Contains(csr.Spec.Groups, certificates.NodesGroup) {
		return "", nil
	}
	nodeName := req.Subject.CommonName[len(certificates.NodeUserPrefix):]
	node, err := c.nodes.Get(nodeName)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("get node %s: %w", nodeName, err)
	}
	if err := NamesMatchNode(req, node); err != nil {
		c.recorder.Eventf(csr, corev1.EventTypeWarning, "NotAutoApproved", "Not auto-approving kubelet serving certificate: %v", err)
		return "", nil
	}
	return fmt.Sprintf("Auto approving kubelet serving certificate: its names are Node %s's addresses.", nodeName), nil
}

// NamesMatchNode reports whether every DNS name and IP of req is one of
// node's status addresses.
func NamesMatchNode(req *x509.CertificateRequest, node *corev1.Node) error {
	dns := map[string]bool{}
	ips := map[string]bool{}
	for _, a := range node.Status.Addresses {
		switch a.Type {
		case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			dns[a.Address] = true
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip := net.ParseIP(a.Address); ip != nil {
				ips[ip.String()] = true
			}
		}
	}
	for _, d := range req.DNSNames {
		if !dns[d] {
			return fmt.Errorf("DNS name %q is not an address of node %s", d, node.Name)
		}
	}
	for _, ip := range req.IPAddresses {
		if !ips[ip.String()] {
			return fmt.Errorf("IP %s is not an address of node %s", ip, node.Name)
		}
	}
	return nil
}
