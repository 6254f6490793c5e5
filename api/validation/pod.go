package validation

import (
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*corev1.Pod]{
		spec:         podRules,
		createOnly:   podCreateRules,
		change:       podChange,
		statusChange: podStatusChange,
	})
}

var specPath = field.NewPath("spec")

// mirrorPodAnnotation marks a static pod's mirror in the API.
const mirrorPodAnnotation = corev1.MirrorPodAnnotationKey

func podRules(pod *corev1.Pod) field.ErrorList {
	errs := podSpec(&pod.Spec, specPath)
	errs = append(errs, podImageWhitespace(&pod.Spec, specPath)...)
	if v, ok := pod.Annotations[mirrorPodAnnotation]; ok && pod.Spec.NodeName == "" {
		errs = append(errs, field.Invalid(metadataPath.Child("annotations").Key(mirrorPodAnnotation), v, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v, ok := pod.Annotations[corev1.PodDeletionCost]; ok {
		if _, err := parseInt32(v); err != nil {
			errs = append(errs, field.Invalid(metadataPath.Child("annotations").Key(corev1.PodDeletionCost), v, "must be a 32bit integer"))
		}
	}
	return errs
}

func parseInt32(s string) (int32, error) {
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("not an integer: %q", s)
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("out of range: %q", s)
	}
	return int32(n), nil
}

func podCreateRules(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return errs
}

// updatablePodSpecFields is listed in the error users see when they change
// anything else, worded as upstream so scripts matching on it keep working.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// podChange enforces that a running pod's spec is immutable except for the
// few fields the kubelet can apply in place.
func podChange(pod, old *corev1.Pod) field.ErrorList {
	errs := podAnnotationChange(pod, old)
	for _, cs := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(cs.new) != len(cs.old) {
			return append(errs, field.Forbidden(specPath.Child(cs.name), "pod updates may not add or remove containers"))
		}
	}

	adsPath := specPath.Child("activeDeadlineSeconds")
	switch {
	case pod.Spec.ActiveDeadlineSeconds != nil && (*pod.Spec.ActiveDeadlineSeconds < 0 || *pod.Spec.ActiveDeadlineSeconds > math.MaxInt32):
		return append(errs, field.Invalid(adsPath, *pod.Spec.ActiveDeadlineSeconds, validation.InclusiveRangeError(0, math.MaxInt32)))
	case pod.Spec.ActiveDeadlineSeconds != nil && old.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds > *old.Spec.ActiveDeadlineSeconds:
		return append(errs, field.Invalid(adsPath, *pod.Spec.ActiveDeadlineSeconds, "must be less than or equal to previous value"))
	case pod.Spec.ActiveDeadlineSeconds == nil && old.Spec.ActiveDeadlineSeconds != nil:
		errs = append(errs, field.Invalid(adsPath, pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}
	errs = append(errs, onlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	errs = append(errs, onlyRemovedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if equality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		return errs
	}
	// Copy the fields that may change from old into a copy of the new spec;
	// whatever still differs was changed illegally.
	munged := pod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	if g := old.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 && munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if len(old.Spec.SchedulingGates) > 0 {
		// A pod still waiting for its gates may get more placement
		// constraints, but may not lose any.
		errs = append(errs, gatedPodPlacementChange(munged, &old.Spec)...)
	}
	if !equality.Semantic.DeepEqual(*munged, old.Spec) {
		msg := fmt.Sprintf("pod updates may not change fields other than %s\n%s", strings.Join(updatablePodSpecFields, ","), specDiff(&old.Spec, munged))
		errs = append(errs, field.Forbidden(specPath, msg))
	}
	return errs
}

// specDiff names the top-level spec fields that differ, in place of the
// full structural diff upstream prints.
func specDiff(old, new *corev1.PodSpec) string {
	ov, nv := reflect.ValueOf(*old), reflect.ValueOf(*new)
	var changed []string
	for i := 0; i < ov.NumField(); i++ {
		if !equality.Semantic.DeepEqual(ov.Field(i).Interface(), nv.Field(i).Interface()) {
			name, _, _ := strings.Cut(ov.Type().Field(i).Tag.Get("json"), ",")
			changed = append(changed, "spec."+name)
		}
	}
	return "changed: " + strings.Join(changed, ", ")
}

// gatedPodPlacementChange lets a gated pod's nodeSelector and required node
// affinity be narrowed, and copies the accepted values into munged.
func gatedPodPlacementChange(munged, old *corev1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(munged.NodeSelector, old.NodeSelector) {
		p := specPath.Child("nodeSelector")
		for k, v := range old.NodeSelector {
			if nv, ok := munged.NodeSelector[k]; !ok || nv != v {
				errs = append(errs, field.Invalid(p, munged.NodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.NodeSelector
	}
	var oldNA, newNA *corev1.NodeAffinity
	if old.Affinity != nil {
		oldNA = old.Affinity.NodeAffinity
	}
	if munged.Affinity != nil {
		newNA = munged.Affinity.NodeAffinity
	}
	if equality.Semantic.DeepEqual(oldNA, newNA) {
		return errs
	}
	errs = append(errs, nodeAffinityNarrowed(newNA, oldNA, specPath.Child("affinity", "nodeAffinity"))...)
	switch {
	case munged.Affinity == nil:
		munged.Affinity = &corev1.Affinity{NodeAffinity: oldNA}
	case old.Affinity == nil && munged.Affinity.PodAffinity == nil && munged.Affinity.PodAntiAffinity == nil:
		munged.Affinity = nil
	default:
		a := *munged.Affinity
		a.NodeAffinity = oldNA
		munged.Affinity = &a
	}
	return errs
}

// nodeAffinityNarrowed accepts required node affinity changes that only add
// requirements to each existing term.
func nodeAffinityNarrowed(newNA, oldNA *corev1.NodeAffinity, fldPath *field.Path) field.ErrorList {
	var oldTerms, newTerms []corev1.NodeSelectorTerm
	if oldNA != nil && oldNA.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		oldTerms = oldNA.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	if newNA != nil && newNA.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		newTerms = newNA.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	p := fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution")
	if len(oldTerms) > 0 && len(newTerms) != len(oldTerms) {
		return field.ErrorList{field.Invalid(p, newTerms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")}
	}
	for i := range oldTerms {
		if !containsAll(newTerms[i].MatchExpressions, oldTerms[i].MatchExpressions) || !containsAll(newTerms[i].MatchFields, oldTerms[i].MatchFields) {
			return field.ErrorList{field.Invalid(p.Child("nodeSelectorTerms").Index(i), newTerms[i], "only additions are allowed (no mutations or deletions)")}
		}
	}
	return nil
}

func containsAll(have, want []corev1.NodeSelectorRequirement) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if equality.Semantic.DeepEqual(h, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// onlyAddedTolerations keeps every existing toleration, allowing only its
// tolerationSeconds to change.
func onlyAddedTolerations(ts, old []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, o := range old {
		found := false
		for _, t := range ts {
			o.TolerationSeconds = t.TolerationSeconds
			if equality.Semantic.DeepEqual(o, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return nil
}

func onlyRemovedSchedulingGates(gates, old []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	oldNames := sets.New[string]()
	for _, g := range old {
		oldNames.Insert(g.Name)
	}
	for _, g := range gates {
		if !oldNames.Has(g.Name) {
			return field.ErrorList{field.Forbidden(fldPath, fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name))}
		}
	}
	return nil
}

// podAnnotationChange protects annotations the kubelet relies on.
func podAnnotationChange(pod, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	p := metadataPath.Child("annotations")
	for k, v := range old.Annotations {
		if nv, ok := pod.Annotations[k]; ok && nv == v {
			continue
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update mirror pod annotation"))
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update AppArmor annotations"))
		}
	}
	for k := range pod.Annotations {
		if _, ok := old.Annotations[k]; ok {
			continue
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add mirror pod annotation"))
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add AppArmor annotations"))
		}
	}
	return errs
}

var systemPodConditions = sets.New(corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized)

// podStatusChange checks a status update: the kubelet and scheduler may not
// move the pod, change its QoS class or resurrect terminated containers.
func podStatusChange(pod, old *corev1.Pod) field.ErrorList {
	errs := podAnnotationChange(pod, old)
	statusPath := field.NewPath("status")
	for i, c := range pod.Status.Conditions {
		if !systemPodConditions.Has(c.Type) {
			errs = append(errs, qualifiedName(string(c.Type), statusPath.Child("conditions").Index(i).Child("type"))...)
		}
	}
	if pod.Spec.NodeName != old.Spec.NodeName {
		errs = append(errs, field.Forbidden(statusPath.Child("nodeName"), "may not be changed directly"))
	}
	if n := pod.Status.NominatedNodeName; n != old.Status.NominatedNodeName && n != "" {
		errs = append(errs, dns1123Subdomain(n, statusPath.Child("nominatedNodeName"))...)
	}
	errs = append(errs, immutable(pod.Status.QOSClass, old.Status.QOSClass, statusPath.Child("qosClass"))...)
	errs = append(errs, containerStateTransitions(pod.Status.ContainerStatuses, old.Status.ContainerStatuses, old.Spec.RestartPolicy, nil, statusPath.Child("containerStatuses"))...)
	errs = append(errs, containerStateTransitions(pod.Status.InitContainerStatuses, old.Status.InitContainerStatuses, old.Spec.RestartPolicy, old.Spec.InitContainers, statusPath.Child("initContainerStatuses"))...)
	errs = append(errs, containerStateTransitions(pod.Status.EphemeralContainerStatuses, old.Status.EphemeralContainerStatuses, corev1.RestartPolicyNever, nil, statusPath.Child("ephemeralContainerStatuses"))...)
	claims := sets.New[string]()
	for _, c := range pod.Spec.ResourceClaims {
		claims.Insert(c.Name)
	}
	seen := sets.New[string]()
	for i, s := range pod.Status.ResourceClaimStatuses {
		p := statusPath.Child("resourceClaimStatuses").Index(i).Child("name")
		if !claims.Has(s.Name) {
			errs = append(errs, field.Invalid(p, s.Name, "must match the name of an entry in `spec.resourceClaims`"))
		}
		if seen.Has(s.Name) {
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		seen.Insert(s.Name)
	}
	podIPs := make([]string, len(pod.Status.PodIPs))
	for i, ip := range pod.Status.PodIPs {
		podIPs[i] = ip.IP
	}
	errs = append(errs, ipPair(podIPs, statusPath.Child("podIPs"))...)
	hostIPs := make([]string, len(pod.Status.HostIPs))
	for i, ip := range pod.Status.HostIPs {
		hostIPs[i] = ip.IP
	}
	errs = append(errs, ipPair(hostIPs, statusPath.Child("hostIPs"))...)
	return errs
}

// containerStateTransitions forbids a terminated container from running
// again when the restart policy says it would not be restarted.
func containerStateTransitions(statuses, old []corev1.ContainerStatus, policy corev1.RestartPolicy, initContainers []corev1.Container, fldPath *field.Path) field.ErrorList {
	if policy == corev1.RestartPolicyAlways {
		return nil
	}
	sidecars := sets.New[string]()
	for _, c := range initContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Insert(c.Name)
		}
	}
	var errs field.ErrorList
	for i, o := range old {
		t := o.State.Terminated
		if t == nil || (t.ExitCode != 0 && policy == corev1.RestartPolicyOnFailure) || sidecars.Has(o.Name) {
			continue
		}
		for _, s := range statuses {
			if s.Name == o.Name && s.State.Terminated == nil {
				errs = append(errs, field.Forbidden(fldPath.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
		}
	}
	return errs
}

// ipPair checks a list of IPs that may hold at most one address per family.
func ipPair(ips []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ip := range ips {
		errs = append(errs, validation.IsValidIPForLegacyField(fldPath.Index(i), ip, true, nil)...)
	}
	if len(errs) > 0 || len(ips) < 2 {
		return errs
	}
	a, errA := netip.ParseAddr(ips[0])
	b, errB := netip.ParseAddr(ips[1])
	if len(ips) > 2 || errA != nil || errB != nil || a.Is4() == b.Is4() {
		errs = append(errs, field.Invalid(fldPath, ips, "may specify no more than one IP for each IP family"))
	}
	return errs
}
