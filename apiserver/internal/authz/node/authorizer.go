package node

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"trireme.dev/apiserver/internal/authz/bootstrappolicy"
	"trireme.dev/apiserver/internal/authz/rbac"
)

// Node identities, as kubelet client certificates carry them.
const (
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
)

// Authorizer is the Node authorizer.
type Authorizer struct {
	pods, claims, volumes, attachments cache.Indexer
	rules                              []rbacv1.PolicyRule
	// synced are the HasSynced of the informers it reads; none when it
	// was built over caches of its caller's.
	synced []cache.InformerSynced
}

var (
	_ authorizer.Authorizer   = (*Authorizer)(nil)
	_ authorizer.RuleResolver = (*Authorizer)(nil)
)

// New returns an authorizer over the given caches. pods, claims and
// volumes must carry the indexers of AddIndexers.
func New(pods, claims, volumes, attachments cache.Indexer) *Authorizer {
	return &Authorizer{pods: pods, claims: claims, volumes: volumes, attachments: attachments, rules: bootstrappolicy.NodeRules()}
}

// NewFromInformers returns an authorizer reading the pod, claim, volume and
// volume attachment informers of f. Call it before f is started.
func NewFromInformers(f informers.SharedInformerFactory) (*Authorizer, error) {
	pods := f.Core().V1().Pods().Informer()
	claims := f.Core().V1().PersistentVolumeClaims().Informer()
	volumes := f.Core().V1().PersistentVolumes().Informer()
	attachments := f.Storage().V1().VolumeAttachments().Informer()
	for _, x := range []struct {
		inf cache.SharedIndexInformer
		idx cache.Indexers
	}{{pods, podIndexers}, {claims, claimIndexers}, {volumes, volumeIndexers}} {
		if err := x.inf.AddIndexers(x.idx); err != nil {
			return nil, fmt.Errorf("node authorizer indexes: %w", err)
		}
	}
	a := New(pods.GetIndexer(), claims.GetIndexer(), volumes.GetIndexer(), attachments.GetIndexer())
	a.synced = []cache.InformerSynced{pods.HasSynced, claims.HasSynced, volumes.HasSynced, attachments.HasSynced}
	return a, nil
}

// Synced returns the HasSynced of the informers the authorizer reads.
func (a *Authorizer) Synced() []cache.InformerSynced { return a.synced }

// NewIndexers returns empty caches with the authorizer's indexes, for tests
// and benchmarks that fill them by hand.
func NewIndexers() (pods, claims, volumes, attachments cache.Indexer) {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers),
		cache.NewIndexer(cache.MetaNamespaceKeyFunc, claimIndexers),
		cache.NewIndexer(cache.MetaNamespaceKeyFunc, volumeIndexers),
		cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
}

// nodeName returns the node a user acts for, and whether it is a node at all.
func nodeName(u user.Info) (string, bool) {
	if u == nil || !strings.HasPrefix(u.GetName(), nodeUserPrefix) {
		return "", false
	}
	for _, g := range u.GetGroups() {
		if g == nodesGroup {
			return strings.TrimPrefix(u.GetName(), nodeUserPrefix), true
		}
	}
	return "", false
}

// Authorize decides requests of node identities and has no opinion on
// anyone else's.
func (a *Authorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	node, isNode := nodeName(attrs.GetUser())
	if !isNode {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if node == "" {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", attrs.GetUser().GetName()), nil
	}
	if attrs.IsResourceRequest() {
		if d, reason, handled := a.authorizeObject(node, attrs); handled {
			return d, reason, nil
		}
	}
	if rbac.RulesAllow(attrs, a.rules) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// authorizeObject decides the resources a node may touch only through its
// pods or by its own name; handled is false for the rest.
func (a *Authorizer) authorizeObject(node string, attrs authorizer.Attributes) (d authorizer.Decision, reason string, handled bool) {
	ns, name, verb, sub := attrs.GetNamespace(), attrs.GetName(), attrs.GetVerb(), attrs.GetSubresource()
	switch attrs.GetAPIGroup() + "/" + attrs.GetResource() {
	case "/secrets", "/configmaps", "/persistentvolumeclaims", "/persistentvolumes", "resource.k8s.io/resourceclaims":
		if sub == "status" && attrs.GetResource() == "persistentvolumeclaims" {
			if verb != "update" && verb != "patch" {
				return deny("can only update or patch persistentvolumeclaim status")
			}
			return a.reachable(node, attrs, refKey(kindClaim, ns, name))
		}
		if sub != "" {
			return deny("cannot access subresource " + sub)
		}
		if verb != "get" {
			return deny("can only get individual resources of this type")
		}
		switch attrs.GetResource() {
		case "secrets":
			return a.allowIf(a.secretReachable(node, ns, name), attrs)
		case "configmaps":
			return a.reachable(node, attrs, refKey(kindConfigMap, ns, name))
		case "persistentvolumeclaims":
			return a.reachable(node, attrs, refKey(kindClaim, ns, name))
		case "persistentvolumes":
			return a.allowIf(a.volumeReachable(node, name), attrs)
		default:
			return a.reachable(node, attrs, refKey(kindResourceClaim, ns, name))
		}
	case "/serviceaccounts":
		// A pod's service account is read for its UID, which the pod's
		// certificate requests name.
		if sub == "" && verb == "get" {
			return a.reachable(node, attrs, refKey(kindAccount, ns, name))
		}
		if sub != "token" {
			return 0, "", false
		}
		if verb != "create" {
			return deny("can only create tokens for individual service accounts")
		}
		return a.reachable(node, attrs, refKey(kindAccount, ns, name))
	case certificatesv1.GroupName + "/podcertificaterequests":
		return podCertificateRequest(node, attrs)
	case "/pods":
		if sub != "status" {
			return 0, "", false
		}
		return a.allowIf(a.podOnNode(node, ns, name), attrs)
	case "/nodes":
		if verb == "get" || verb == "list" || verb == "watch" {
			return 0, "", false
		}
		if verb != "create" && name != node {
			return deny("can only modify the node with the same name as the requesting node")
		}
		return authorizer.DecisionAllow, "", true
	case coordinationv1.GroupName + "/leases":
		switch verb {
		case "get", "create", "update", "patch", "delete":
		default:
			return deny("can only get, create, update, patch, or delete a node lease")
		}
		if ns != corev1.NamespaceNodeLease {
			return deny(fmt.Sprintf("can only access leases in the %q system namespace", corev1.NamespaceNodeLease))
		}
		// A create's name is in the body: NodeRestriction admission checks it.
		if verb != "create" && name != node {
			return deny("can only access node lease with the same name as the requesting node")
		}
		return authorizer.DecisionAllow, "", true
	case storagev1.GroupName + "/csinodes":
		switch verb {
		case "get", "create", "update", "patch", "delete":
		default:
			return deny("can only get, create, update, patch, or delete a CSINode")
		}
		if verb != "create" && name != node {
			return deny("can only access CSINode with the same name as the requesting node")
		}
		return authorizer.DecisionAllow, "", true
	case storagev1.GroupName + "/volumeattachments":
		if verb != "get" {
			return deny("can only get individual resources of this type")
		}
		obj, ok, _ := a.attachments.GetByKey(name)
		va, _ := obj.(*storagev1.VolumeAttachment)
		return a.allowIf(ok && va != nil && va.Spec.NodeName == node, attrs)
	}
	return 0, "", false
}

// podCertificateRequest lets a kubelet create requests (NodeRestriction
// admission checks they are for its pods) and list and watch those naming
// it, as upstream's node authorizer does.
func podCertificateRequest(node string, attrs authorizer.Attributes) (authorizer.Decision, string, bool) {
	if attrs.GetSubresource() != "" {
		return deny("nodes may not access the status subresource of PodCertificateRequests")
	}
	switch attrs.GetVerb() {
	case "create":
		return authorizer.DecisionAllow, "", true
	case "list", "watch":
		reqs, _ := attrs.GetFieldSelector()
		for _, r := range reqs {
			if r.Field == "spec.nodeName" && (r.Operator == selection.Equals || r.Operator == selection.DoubleEquals) && r.Value == node {
				return authorizer.DecisionAllow, "", true
			}
		}
		return deny("can only list/watch podcertificaterequests with nodeName field selector")
	}
	return deny(fmt.Sprintf("nodes may not %s podcertificaterequests", attrs.GetVerb()))
}

func deny(reason string) (authorizer.Decision, string, bool) {
	return authorizer.DecisionNoOpinion, reason, true
}

func (a *Authorizer) allowIf(ok bool, attrs authorizer.Attributes) (authorizer.Decision, string, bool) {
	if ok {
		return authorizer.DecisionAllow, "", true
	}
	return deny(fmt.Sprintf("no relationship found between node %q and this object", nodeNameOf(attrs)))
}

func nodeNameOf(attrs authorizer.Attributes) string {
	n, _ := nodeName(attrs.GetUser())
	return n
}

func (a *Authorizer) reachable(node string, attrs authorizer.Attributes, key string) (authorizer.Decision, string, bool) {
	return a.allowIf(a.usedOnNode(node, key), attrs)
}

// usedOnNode reports whether a pod bound to node uses the object key names.
func (a *Authorizer) usedOnNode(node, key string) bool {
	pods, err := a.pods.ByIndex(refIndex, key)
	if err != nil {
		return false
	}
	for _, o := range pods {
		if o.(*corev1.Pod).Spec.NodeName == node {
			return true
		}
	}
	return false
}

// secretReachable: a pod on node uses the secret, or a volume it mounts does.
func (a *Authorizer) secretReachable(node, ns, name string) bool {
	if a.usedOnNode(node, refKey(kindSecret, ns, name)) {
		return true
	}
	volumes, err := a.volumes.ByIndex(volumeSecretIndex, ns+"/"+name)
	if err != nil {
		return false
	}
	for _, o := range volumes {
		if a.volumeReachable(node, o.(*corev1.PersistentVolume).Name) {
			return true
		}
	}
	return false
}

// volumeReachable: the claim bound to the volume is used by a pod on node.
func (a *Authorizer) volumeReachable(node, name string) bool {
	claims, err := a.claims.ByIndex(volumeIndex, name)
	if err != nil {
		return false
	}
	for _, o := range claims {
		pvc := o.(*corev1.PersistentVolumeClaim)
		if a.usedOnNode(node, refKey(kindClaim, pvc.Namespace, pvc.Name)) {
			return true
		}
	}
	return false
}

func (a *Authorizer) podOnNode(node, ns, name string) bool {
	obj, ok, err := a.pods.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return false
	}
	return obj.(*corev1.Pod).Spec.NodeName == node
}

// ConditionsAwareAuthorize implements authorizer.Authorizer.
func (a *Authorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer.
func (a *Authorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver: a node's static rules. The
// per-object grants cannot be listed, so the answer is incomplete.
func (a *Authorizer) RulesFor(_ context.Context, u user.Info, _ string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	if _, isNode := nodeName(u); !isNode {
		return nil, nil, false, nil
	}
	var res []authorizer.ResourceRuleInfo
	for _, r := range a.rules {
		res = append(res, &authorizer.DefaultResourceRuleInfo{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	return res, nil, true, nil
}
