package validation

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var restartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
var dnsPolicies = []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}
var preemptionPolicies = []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}
var osNames = []corev1.OSName{corev1.Linux, corev1.Windows}

const (
	maxDNSNameservers  = 3
	maxDNSSearchPaths  = 32
	maxDNSSearchLength = 2048
)

// podSpec checks a pod's spec, whether in a pod or in a template.
func podSpec(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	vols, errs := volumes(spec.Volumes, fldPath.Child("volumes"))
	pc := &podContext{spec: spec, volumes: vols, claimNames: sets.New[string](), names: sets.New[string]()}
	errs = append(errs, podResourceClaims(spec.ResourceClaims, pc.claimNames, fldPath.Child("resourceClaims"))...)
	errs = append(errs, pc.initContainers(spec.InitContainers, fldPath.Child("initContainers"))...)
	errs = append(errs, pc.containers(spec.Containers, fldPath.Child("containers"))...)
	errs = append(errs, pc.ephemeralContainers(spec.EphemeralContainers, fldPath.Child("ephemeralContainers"))...)
	errs = append(errs, hostNetworkPorts(spec, fldPath)...)
	errs = append(errs, hostPortConflicts(spec, fldPath)...)
	errs = append(errs, enum(spec.RestartPolicy, fldPath.Child("restartPolicy"), restartPolicies...)...)
	errs = append(errs, enum(spec.DNSPolicy, fldPath.Child("dnsPolicy"), dnsPolicies...)...)
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	errs = append(errs, podSecurityContext(spec, fldPath.Child("securityContext"))...)
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	errs = append(errs, affinity(spec.Affinity, fldPath.Child("affinity"))...)
	errs = append(errs, dnsConfig(spec, fldPath.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		errs = append(errs, qualifiedName(string(g.ConditionType), fldPath.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	errs = append(errs, topologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	if spec.ServiceAccountName != "" {
		errs = append(errs, dns1123Subdomain(spec.ServiceAccountName, fldPath.Child("serviceAccountName"))...)
	}
	if spec.NodeName != "" {
		errs = append(errs, dns1123Subdomain(spec.NodeName, fldPath.Child("nodeName"))...)
	}
	if spec.ActiveDeadlineSeconds != nil {
		if v := *spec.ActiveDeadlineSeconds; v < 1 || v > math.MaxInt32 {
			errs = append(errs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	if spec.TerminationGracePeriodSeconds != nil {
		errs = append(errs, nonNegative(*spec.TerminationGracePeriodSeconds, fldPath.Child("terminationGracePeriodSeconds"))...)
	}
	if spec.Hostname != "" {
		errs = append(errs, dns1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, dns1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	if spec.HostnameOverride != nil {
		errs = append(errs, dns1123Subdomain(*spec.HostnameOverride, fldPath.Child("hostnameOverride"))...)
	}
	errs = append(errs, tolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	for i, ha := range spec.HostAliases {
		p := fldPath.Child("hostAliases").Index(i)
		errs = append(errs, validation.IsValidIPForLegacyField(p.Child("ip"), ha.IP, true, nil)...)
		for j, h := range ha.Hostnames {
			errs = append(errs, dns1123Subdomain(h, p.Child("hostnames").Index(j))...)
		}
	}
	if spec.PriorityClassName != "" {
		errs = append(errs, dns1123Subdomain(spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	}
	if spec.RuntimeClassName != nil {
		errs = append(errs, dns1123Subdomain(*spec.RuntimeClassName, fldPath.Child("runtimeClassName"))...)
	}
	if spec.PreemptionPolicy != nil {
		errs = append(errs, enum(*spec.PreemptionPolicy, fldPath.Child("preemptionPolicy"), preemptionPolicies...)...)
	}
	errs = append(errs, resourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead}, containerResourceName, fldPath.Child("overhead"))...)
	errs = append(errs, podLevelResources(spec.Resources, fldPath.Child("resources"))...)
	errs = append(errs, schedulingGates(spec.SchedulingGates, fldPath.Child("schedulingGates"))...)
	if spec.OS != nil {
		errs = append(errs, enum(spec.OS.Name, fldPath.Child("os", "name"), osNames...)...)
	}
	if spec.HostUsers != nil && !*spec.HostUsers && (spec.HostNetwork || spec.HostPID || spec.HostIPC) {
		errs = append(errs, field.Forbidden(fldPath.Child("hostUsers"), "when `hostUsers` is false, `hostNetwork`, `hostPID` and `hostIPC` must be false"))
	}
	return errs
}

// podResourceClaims checks spec.resourceClaims and collects their names.
func podResourceClaims(claims []corev1.PodResourceClaim, names sets.Set[string], fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range claims {
		p := fldPath.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, dns1123Label(c.Name, p.Child("name"))...)
			if names.Has(c.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
			}
			names.Insert(c.Name)
		}
		switch {
		case c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil:
			errs = append(errs, field.Invalid(p, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		case c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil:
			errs = append(errs, field.Invalid(p, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		case c.ResourceClaimName != nil:
			errs = append(errs, dns1123Subdomain(*c.ResourceClaimName, p.Child("resourceClaimName"))...)
		default:
			errs = append(errs, dns1123Subdomain(*c.ResourceClaimTemplateName, p.Child("resourceClaimTemplateName"))...)
		}
	}
	return errs
}

func schedulingGates(gates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		errs = append(errs, qualifiedName(g.Name, fldPath.Index(i))...)
		if seen.Has(g.Name) {
			errs = append(errs, field.Duplicate(fldPath.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return errs
}

func dnsConfig(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	cfg := spec.DNSConfig
	var errs field.ErrorList
	if spec.DNSPolicy == corev1.DNSNone {
		if cfg == nil {
			return field.ErrorList{field.Required(fldPath, "must provide `dnsConfig` when `dnsPolicy` is None")}
		}
		if len(cfg.Nameservers) == 0 {
			errs = append(errs, field.Required(fldPath.Child("nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None"))
		}
	}
	if cfg == nil {
		return errs
	}
	if len(cfg.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(fldPath.Child("nameservers"), cfg.Nameservers, "must not have more than 3 nameservers"))
	}
	for i, ns := range cfg.Nameservers {
		errs = append(errs, validation.IsValidIPForLegacyField(fldPath.Child("nameservers").Index(i), ns, true, nil)...)
	}
	if len(cfg.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.Invalid(fldPath.Child("searches"), cfg.Searches, "must not have more than 32 search paths"))
	}
	total := 0
	for i, s := range cfg.Searches {
		total += len(s)
		if s == "." {
			continue
		}
		trimmed := s
		if len(trimmed) > 0 && trimmed[len(trimmed)-1] == '.' {
			trimmed = trimmed[:len(trimmed)-1]
		}
		errs = append(errs, dns1123Subdomain(trimmed, fldPath.Child("searches").Index(i))...)
	}
	if total+len(cfg.Searches)-1 > maxDNSSearchLength {
		errs = append(errs, field.Invalid(fldPath.Child("searches"), cfg.Searches, "must not have more than 2048 characters (including spaces) in the search list"))
	}
	for i, o := range cfg.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

// podTemplateSpec checks a template embedded in a workload: its labels and
// annotations, and its spec. Templates have no name.
func podTemplateSpec(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	mp := fldPath.Child("metadata")
	errs = append(errs, metav1validation.ValidateLabels(t.Labels, mp.Child("labels"))...)
	errs = append(errs, annotations(t.Annotations, mp.Child("annotations"))...)
	errs = append(errs, podSpec(&t.Spec, fldPath.Child("spec"))...)
	// Controllers create pods from the template; ephemeral containers are
	// only ever added to a running pod.
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}
