package noderestriction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

const (
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
	mirrorPodKey   = "kubernetes.io/config.mirror"
	// restrictedLabelPrefix marks node labels only administrators set, so
	// workloads can trust them for isolation.
	restrictedLabelPrefix = "node-restriction.kubernetes.io/"
	nodeLeaseNamespace    = "kube-node-lease"
)

// Plugin restricts what kubelets may write.
type Plugin struct {
	*admission.Handler
	client kubernetes.Interface
	pods   corelisters.PodLister
	nodes  corelisters.NodeLister
}

var (
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	pods, nodes := f.Core().V1().Pods(), f.Core().V1().Nodes()
	p.pods, p.nodes = pods.Lister(), nodes.Lister()
	p.SetReadyFunc(func() bool { return pods.Informer().HasSynced() && nodes.Informer().HasSynced() })
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.client == nil || p.pods == nil {
		return errors.New("NodeRestriction needs a client and an informer factory")
	}
	return nil
}

// NodeName returns the node a user is, or "" for users that are not nodes.
func NodeName(u user.Info) string {
	if u == nil || !strings.HasPrefix(u.GetName(), nodeUserPrefix) {
		return ""
	}
	for _, g := range u.GetGroups() {
		if g == nodesGroup {
			return strings.TrimPrefix(u.GetName(), nodeUserPrefix)
		}
	}
	return ""
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	node := NodeName(a.GetUserInfo())
	if node == "" {
		return nil
	}
	switch a.GetResource().GroupResource() {
	case corev1.Resource("pods"):
		return p.pod(ctx, node, a)
	case corev1.Resource("nodes"):
		return p.node(node, a)
	case coordinationv1.Resource("leases"):
		if a.GetNamespace() == nodeLeaseNamespace && a.GetName() != node {
			return admission.NewForbidden(a, errors.New("can only access node lease with the same name as the requesting node"))
		}
	case storagev1.Resource("csinodes"):
		if a.GetName() != node {
			return admission.NewForbidden(a, errors.New("can only access CSINode with the same name as the requesting node"))
		}
	case corev1.Resource("serviceaccounts"):
		if a.GetSubresource() == "token" {
			return p.token(ctx, node, a)
		}
	case certificatesv1.Resource("podcertificaterequests"):
		return p.podCertificateRequest(ctx, node, a)
	}
	return nil
}

// podCertificateRequest lets a kubelet create requests only for a pod
// running on it (not a mirror pod), naming itself, the pod and the pod's
// service account by name and UID, as upstream's NodeRestriction does. A
// UID mismatch may be the informers' lag, so it is not Forbidden: the
// kubelet retries.
func (p *Plugin) podCertificateRequest(ctx context.Context, node string, a admission.Attributes) error {
	if a.GetOperation() != admission.Create {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %v", a.GetOperation()))
	}
	if a.GetSubresource() != "" {
		return admission.NewForbidden(a, fmt.Errorf("unexpected subresource %v", a.GetSubresource()))
	}
	req, ok := a.GetObject().(*certificatesv1.PodCertificateRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	ns, spec := a.GetNamespace(), req.Spec
	if string(spec.NodeName) != node {
		return admission.NewForbidden(a, fmt.Errorf("PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", spec.NodeName, node))
	}
	n, err := p.nodes.Get(node)
	if err != nil {
		return fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", node, err)
	}
	if n.UID != spec.NodeUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", ns+"/"+spec.PodName, spec.NodeUID, n.UID)
	}
	pod, err := p.pods.Pods(ns).Get(spec.PodName)
	if err != nil {
		return fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", ns+"/"+spec.PodName, err)
	}
	if pod.UID != spec.PodUID {
		return fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", ns+"/"+spec.PodName, spec.PodUID, pod.UID)
	}
	if pod.Spec.NodeName != node {
		return admission.NewForbidden(a, fmt.Errorf("pod %q is not running on node %q named in the PodCertificateRequest", ns+"/"+spec.PodName, node))
	}
	if _, mirror := pod.Annotations[mirrorPodKey]; mirror {
		return admission.NewForbidden(a, fmt.Errorf("pod %q is a mirror pod", ns+"/"+spec.PodName))
	}
	if spec.ServiceAccountName != pod.Spec.ServiceAccountName {
		return admission.NewForbidden(a, fmt.Errorf("PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", ns+"/"+spec.PodName, spec.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	sa, err := p.client.CoreV1().ServiceAccounts(ns).Get(ctx, spec.ServiceAccountName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", ns+"/"+spec.ServiceAccountName, err)
	}
	if sa.UID != spec.ServiceAccountUID {
		return fmt.Errorf("PodCertificateRequest for pod %q contains serviceAccountUID (%q) that differs from the service account (%q)", ns+"/"+spec.PodName, spec.ServiceAccountUID, sa.UID)
	}
	return nil
}

func (p *Plugin) pod(ctx context.Context, node string, a admission.Attributes) error {
	switch a.GetSubresource() {
	case "":
		switch a.GetOperation() {
		case admission.Create:
			return p.podCreate(node, a)
		case admission.Delete:
			return p.boundHere(ctx, node, a, "delete")
		}
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.GetOperation(), node))
	case "status":
		pod, ok := a.GetOldObject().(*corev1.Pod)
		if !ok || pod.Spec.NodeName != node {
			return admission.NewForbidden(a, fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", node))
		}
		return nil
	case "eviction":
		return p.boundHere(ctx, node, a, "evict")
	}
	return admission.NewForbidden(a, fmt.Errorf("unexpected subresource %q", a.GetSubresource()))
}

// boundHere allows an action only on a pod bound to node; a pod that is
// already gone is nobody's business.
func (p *Plugin) boundHere(ctx context.Context, node string, a admission.Attributes, verb string) error {
	pod, err := p.client.CoreV1().Pods(a.GetNamespace()).Get(ctx, a.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up pod %s/%s: %w", a.GetNamespace(), a.GetName(), err))
	}
	if pod.Spec.NodeName != node {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only %s pods with spec.nodeName set to itself", node, verb))
	}
	return nil
}

func (p *Plugin) podCreate(node string, a admission.Attributes) error {
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodKey]; !mirror {
		return admission.NewForbidden(a, fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", mirrorPodKey, node))
	}
	if pod.Spec.NodeName != node {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", node))
	}
	if len(pod.OwnerReferences) != 1 {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with a single owner reference set to itself", node))
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != node {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", node))
	}
	if owner.Controller == nil || !*owner.Controller {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", node))
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return admission.NewForbidden(a, fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", node))
	}
	if p.WaitForReady() {
		if n, err := p.nodes.Get(node); err == nil && n.UID != owner.UID {
			return admission.NewForbidden(a, fmt.Errorf("node %s UID mismatch", node))
		}
	}
	// A mirror pod must not reach for credentials the node was not given.
	if pod.Spec.ServiceAccountName != "" {
		return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference a service account", node))
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference secrets", node))
		case v.ConfigMap != nil:
			return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference configmaps", node))
		case v.PersistentVolumeClaim != nil:
			return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference persistentvolumeclaims", node))
		case v.Projected != nil:
			return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference projected volumes", node))
		}
	}
	return nil
}

func (p *Plugin) node(node string, a admission.Attributes) error {
	if a.GetName() != node {
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify node %q", node, a.GetName()))
	}
	n, ok := a.GetObject().(*corev1.Node)
	if !ok {
		return nil
	}
	old, _ := a.GetOldObject().(*corev1.Node)
	if a.GetOperation() == admission.Create {
		for k := range n.Labels {
			if strings.HasPrefix(k, restrictedLabelPrefix) {
				return admission.NewForbidden(a, fmt.Errorf("is not allowed to set the following labels: %s", k))
			}
		}
		return nil
	}
	if old == nil {
		return nil
	}
	for k, v := range n.Labels {
		if strings.HasPrefix(k, restrictedLabelPrefix) && old.Labels[k] != v {
			return admission.NewForbidden(a, fmt.Errorf("is not allowed to modify labels: %s", k))
		}
	}
	for k := range old.Labels {
		if _, kept := n.Labels[k]; !kept && strings.HasPrefix(k, restrictedLabelPrefix) {
			return admission.NewForbidden(a, fmt.Errorf("is not allowed to modify labels: %s", k))
		}
	}
	if a.GetSubresource() == "" && !apiequality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify taints", node))
	}
	if !apiequality.Semantic.DeepEqual(n.Spec.PodCIDRs, old.Spec.PodCIDRs) || n.Spec.PodCIDR != old.Spec.PodCIDR {
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify pod CIDRs", node))
	}
	return nil
}

// token allows a kubelet tokens only bound to a pod that runs on it.
func (p *Plugin) token(ctx context.Context, node string, a admission.Attributes) error {
	tr, ok := a.GetObject().(*authenticationv1.TokenRequest)
	if !ok {
		return nil
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.Kind != "Pod" {
		return admission.NewForbidden(a, errors.New("node requested token not bound to a pod"))
	}
	pod, err := p.client.CoreV1().Pods(a.GetNamespace()).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up pod %s/%s: %w", a.GetNamespace(), ref.Name, err))
	}
	if ref.UID != "" && ref.UID != pod.UID {
		return admission.NewForbidden(a, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	if pod.Spec.NodeName != node {
		return admission.NewForbidden(a, errors.New("node requested token bound to a pod scheduled on a different node"))
	}
	return nil
}
