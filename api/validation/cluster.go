package validation

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*corev1.Namespace]{
		cluster:      true,
		name:         apimachineryvalidation.ValidateNamespaceName,
		spec:         func(ns *corev1.Namespace) field.ErrorList { return namespaceFinalizers(ns.Spec.Finalizers) },
		statusChange: namespaceStatusChange,
	})
	register(&kind[*corev1.Node]{cluster: true, spec: nodeRules, change: nodeChange, statusChange: nodeStatusChange})
}

// standardFinalizers are the unqualified finalizer names Kubernetes owns.
var standardFinalizers = sets.New(string(corev1.FinalizerKubernetes), "orphan", "foregroundDeletion")

func namespaceFinalizers(names []corev1.FinalizerName) field.ErrorList {
	fldPath := specPath.Child("finalizers")
	errs := finalizers(names, fldPath)
	for i, n := range names {
		if !strings.Contains(string(n), "/") && !standardFinalizers.Has(string(n)) {
			errs = append(errs, field.Invalid(fldPath.Index(i), n, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// namespaceStatusChange ties the phase to deletion: a namespace terminates
// exactly when it is being deleted.
func namespaceStatusChange(ns, old *corev1.Namespace) field.ErrorList {
	p := field.NewPath("status", "Phase")
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			return field.ErrorList{field.Invalid(p, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty")}
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		return field.ErrorList{field.Invalid(p, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
	}
	return nil
}

func nodeRules(node *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, taints(node.Spec.Taints, specPath.Child("taints"))...)
	errs = append(errs, nodeResources(node)...)
	cidrPath := specPath.Child("podCIDRs")
	bad := false
	for i, c := range node.Spec.PodCIDRs {
		cErrs := validation.IsValidCIDRForLegacyField(cidrPath.Index(i), c, true, nil)
		bad = bad || len(cErrs) > 0
		errs = append(errs, cErrs...)
	}
	if !bad && len(node.Spec.PodCIDRs) > 1 {
		if len(node.Spec.PodCIDRs) > 2 || cidrFamily(node.Spec.PodCIDRs[0]) == cidrFamily(node.Spec.PodCIDRs[1]) {
			errs = append(errs, field.Invalid(cidrPath, node.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
		}
		seen := sets.New[string]()
		for i, c := range node.Spec.PodCIDRs {
			if seen.Has(c) {
				errs = append(errs, field.Duplicate(cidrPath.Index(i), c))
			}
			seen.Insert(c)
		}
	}
	return errs
}

// cidrFamily returns 4 or 6 for a parsable CIDR.
func cidrFamily(cidr string) int {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || p.Addr().Unmap().Is4() {
		return 4
	}
	return 6
}

func nodeResources(node *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(node.Status.Capacity) {
		errs = append(errs, quantityValue(name, node.Status.Capacity[name], field.NewPath("status", "capacity").Key(string(name)))...)
	}
	for _, name := range sortedKeys(node.Status.Allocatable) {
		errs = append(errs, quantityValue(name, node.Status.Allocatable[name], field.NewPath("status", "allocatable").Key(string(name)))...)
	}
	return errs
}

// nodeChange lets the controller manager assign pod CIDRs and the provider
// ID once, and never change them afterwards.
func nodeChange(node, old *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	if len(old.Spec.PodCIDRs) > 0 && !slices.Equal(old.Spec.PodCIDRs, node.Spec.PodCIDRs) {
		errs = append(errs, field.Forbidden(specPath.Child("podCIDRs"), "may not change once set"))
	}
	if old.Spec.ProviderID != "" && old.Spec.ProviderID != node.Spec.ProviderID {
		errs = append(errs, field.Forbidden(specPath.Child("providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	if node.Spec.ConfigSource != nil && !equality.Semantic.DeepEqual(node.Spec.ConfigSource, old.Spec.ConfigSource) {
		errs = append(errs, field.Forbidden(specPath.Child("configSource"), "update to deprecated field is not allowed"))
	}
	errs = append(errs, nodeAddresses(node)...)
	return errs
}

// nodeStatusChange runs the update rules too: upstream validates node
// status writes like full updates, since the kubelet owns both.
func nodeStatusChange(node, old *corev1.Node) field.ErrorList {
	errs := nodeRules(node)
	return append(errs, nodeChange(node, old)...)
}

func nodeAddresses(node *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, a := range node.Status.Addresses {
		key := string(a.Type) + "/" + a.Address
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen.Insert(key)
	}
	return errs
}

// quotaResources are the unprefixed names a ResourceQuota may limit.
var quotaResources = sets.New[corev1.ResourceName](
	corev1.ResourcePods, corev1.ResourceServices, corev1.ResourceReplicationControllers, corev1.ResourceQuotas,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
)

func quotaResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	if errs := qualifiedName(string(name), fldPath); len(errs) > 0 {
		return errs
	}
	s := string(name)
	if strings.Contains(s, "/") || quotaResources.Has(name) || strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix+corev1.ResourceHugePagesPrefix) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, name, "must be a standard resource for quota")}
}

func resourceList(list corev1.ResourceList, nameCheck func(corev1.ResourceName, *field.Path) field.ErrorList, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(list) {
		p := fldPath.Key(string(name))
		errs = append(errs, nameCheck(name, p)...)
		errs = append(errs, quantityValue(name, list[name], p)...)
	}
	return errs
}

var quotaScopes = []corev1.ResourceQuotaScope{
	corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeBestEffort,
	corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
	corev1.ResourceQuotaScopeVolumeAttributesClass,
}
var scopeOperators = []corev1.ScopeSelectorOperator{corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn, corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist}

func init() {
	register(&kind[*corev1.ResourceQuota]{
		spec:   quotaRules,
		change: quotaChange,
		statusChange: func(q, old *corev1.ResourceQuota) field.ErrorList {
			errs := resourceList(q.Status.Hard, quotaResourceName, field.NewPath("status", "hard"))
			return append(errs, resourceList(q.Status.Used, quotaResourceName, field.NewPath("status", "used"))...)
		},
	})
	register(&kind[*corev1.LimitRange]{spec: limitRangeRules})
}

func quotaRules(q *corev1.ResourceQuota) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, resourceList(q.Spec.Hard, quotaResourceName, specPath.Child("hard"))...)
	scopes := sets.New[corev1.ResourceQuotaScope]()
	for i, s := range q.Spec.Scopes {
		errs = append(errs, enum(s, specPath.Child("scopes").Index(i), quotaScopes...)...)
		scopes.Insert(s)
	}
	if sel := q.Spec.ScopeSelector; sel != nil {
		p := specPath.Child("scopeSelector", "matchExpressions")
		if len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Required(p, "must have at least one scope selector requirement"))
		}
		for i, r := range sel.MatchExpressions {
			rp := p.Index(i)
			errs = append(errs, enum(r.ScopeName, rp.Child("scopeName"), quotaScopes...)...)
			errs = append(errs, enum(r.Operator, rp.Child("operator"), scopeOperators...)...)
			switch r.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(r.Values) == 0 {
					errs = append(errs, field.Required(rp.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(r.Values) != 0 {
					errs = append(errs, field.Invalid(rp.Child("values"), r.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			}
			scopes.Insert(r.ScopeName)
		}
	}
	if scopes.Has(corev1.ResourceQuotaScopeTerminating) && scopes.Has(corev1.ResourceQuotaScopeNotTerminating) ||
		scopes.Has(corev1.ResourceQuotaScopeBestEffort) && scopes.Has(corev1.ResourceQuotaScopeNotBestEffort) {
		errs = append(errs, field.Invalid(specPath.Child("scopes"), q.Spec.Scopes, "conflicting scopes"))
	}
	return errs
}

func quotaChange(q, old *corev1.ResourceQuota) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, immutable(q.Spec.Scopes, old.Spec.Scopes, specPath.Child("scopes"))...)
	errs = append(errs, immutable(q.Spec.ScopeSelector, old.Spec.ScopeSelector, specPath.Child("scopeSelector"))...)
	return errs
}

var limitTypes = []corev1.LimitType{corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim}

// limitRangeRules checks each limit's bounds are ordered:
// min <= defaultRequest <= default <= max.
func limitRangeRules(lr *corev1.LimitRange) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.LimitType]()
	for i, l := range lr.Spec.Limits {
		p := specPath.Child("limits").Index(i)
		errs = append(errs, enum(l.Type, p.Child("type"), limitTypes...)...)
		if seen.Has(l.Type) {
			errs = append(errs, field.Duplicate(p.Child("type"), l.Type))
		}
		seen.Insert(l.Type)
		for _, part := range []struct {
			name string
			list corev1.ResourceList
		}{{"max", l.Max}, {"min", l.Min}, {"default", l.Default}, {"defaultRequest", l.DefaultRequest}, {"maxLimitRequestRatio", l.MaxLimitRequestRatio}} {
			errs = append(errs, resourceList(part.list, resourceName, p.Child(part.name))...)
		}
		if l.Type == corev1.LimitTypePod {
			if len(l.Default) > 0 {
				errs = append(errs, field.Forbidden(p.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(l.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(p.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		}
		names := sets.New[corev1.ResourceName]()
		for _, list := range []corev1.ResourceList{l.Max, l.Min, l.Default, l.DefaultRequest, l.MaxLimitRequestRatio} {
			for n := range list {
				names.Insert(n)
			}
		}
		for _, n := range sets.List(names) {
			errs = append(errs, limitOrder(l, n, p)...)
		}
	}
	return errs
}

func limitOrder(l corev1.LimitRangeItem, n corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	key := string(n)
	maxQ, hasMax := l.Max[n]
	minQ, hasMin := l.Min[n]
	defQ, hasDef := l.Default[n]
	reqQ, hasReq := l.DefaultRequest[n]
	ratio, hasRatio := l.MaxLimitRequestRatio[n]
	if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("min").Key(key), minQ.String(), fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
	}
	if hasReq && hasMin && minQ.Cmp(reqQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(key), reqQ.String(), fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), reqQ.String())))
	}
	if hasReq && hasMax && reqQ.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(key), reqQ.String(), fmt.Sprintf("default request value %s is greater than max value %s", reqQ.String(), maxQ.String())))
	}
	if hasReq && hasDef && reqQ.Cmp(defQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(key), reqQ.String(), fmt.Sprintf("default request value %s is greater than default limit value %s", reqQ.String(), defQ.String())))
	}
	if hasDef && hasMin && minQ.Cmp(defQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("default").Key(key), defQ.String(), fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), defQ.String())))
	}
	if hasDef && hasMax && defQ.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("default").Key(key), defQ.String(), fmt.Sprintf("default value %s is greater than max value %s", defQ.String(), maxQ.String())))
	}
	if hasRatio {
		rp := p.Child("maxLimitRequestRatio").Key(key)
		if ratio.MilliValue() < 1000 {
			errs = append(errs, field.Invalid(rp, ratio.String(), fmt.Sprintf("ratio %s is less than 1", ratio.String())))
		}
		if hasMin && hasMax && minQ.MilliValue() > 0 {
			maxRatio := float64(maxQ.MilliValue()) / float64(minQ.MilliValue())
			if float64(ratio.MilliValue())/1000 > maxRatio {
				errs = append(errs, field.Invalid(rp, ratio.String(), fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), maxRatio)))
			}
		}
	}
	return errs
}
