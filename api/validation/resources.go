package validation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// standardContainerResources are the unprefixed resources a container may
// request; hugepages-<size> is accepted as well.
var standardContainerResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

// standardResources are all unprefixed resource names Kubernetes knows,
// as quota and limit ranges use them.
var standardResources = sets.New[corev1.ResourceName](
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers, corev1.ResourceStorage,
	corev1.ResourceRequestsStorage,
)

// integerResources are counted objects and may not be fractional.
var integerResources = sets.New[corev1.ResourceName](
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
)

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// isNative reports names owned by Kubernetes: unprefixed or kubernetes.io/.
func isNative(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), "kubernetes.io/")
}

// isExtended reports device-plugin style resources such as example.com/gpu.
func isExtended(name corev1.ResourceName) bool {
	if isNative(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(qualifiedName(corev1.DefaultResourceRequestsPrefix+string(name), nil)) == 0
}

// overcommitAllowed reports whether requests may be lower than limits.
func overcommitAllowed(name corev1.ResourceName) bool {
	return isNative(name) && !isHugePages(name)
}

func isStandardResource(name corev1.ResourceName) bool {
	s := strings.TrimPrefix(string(name), corev1.DefaultResourceRequestsPrefix)
	return standardResources.Has(name) || isHugePages(corev1.ResourceName(s))
}

// resourceName checks a resource name as quota, limit ranges and nodes use it.
func resourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	if errs := qualifiedName(string(name), fldPath); len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") && !isStandardResource(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a standard resource type or fully qualified")}
	}
	return nil
}

func containerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	if errs := resourceName(name, fldPath); len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") {
		if !standardContainerResources.Has(name) && !isHugePages(name) {
			return field.ErrorList{field.Invalid(fldPath, name, "must be a standard resource for containers")}
		}
	} else if !isNative(name) && !isExtended(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "doesn't follow extended resource name standard")}
	}
	return nil
}

// quantityValue checks an amount of a resource: never negative, and whole
// for resources that count things.
func quantityValue(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	errs := nonNegativeQuantity(q, fldPath)
	if (integerResources.Has(name) || isExtended(name)) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(fldPath, q.String(), isNotIntegerErrorMsg))
	}
	return errs
}

// resources checks a container's requests, limits and claims.
func (pc *podContext) resources(r *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	errs := resourceRequirements(r, containerResourceName, fldPath)
	errs = append(errs, pc.claimRefs(r.Claims, fldPath.Child("claims"))...)
	return errs
}

func resourceRequirements(r *corev1.ResourceRequirements, nameCheck func(corev1.ResourceName, *field.Path) field.ErrorList, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	cpuOrMemory, huge := false, false
	note := func(name corev1.ResourceName) {
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
		huge = huge || isHugePages(name)
	}
	for _, name := range sortedKeys(r.Limits) {
		q := r.Limits[name]
		p := limPath.Key(string(name))
		errs = append(errs, nameCheck(name, p)...)
		errs = append(errs, quantityValue(name, q, p)...)
		note(name)
	}
	for _, name := range sortedKeys(r.Requests) {
		q := r.Requests[name]
		p := reqPath.Key(string(name))
		errs = append(errs, nameCheck(name, p)...)
		errs = append(errs, quantityValue(name, q, p)...)
		note(name)
		limit, ok := r.Limits[name]
		switch {
		case ok && q.Cmp(limit) != 0 && !overcommitAllowed(name):
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !overcommitAllowed(name):
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
	}
	if huge && !cpuOrMemory {
		errs = append(errs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	return errs
}

// claimRefs checks that a container's resource claims name entries of
// spec.resourceClaims, each at most once.
func (pc *podContext) claimRefs(claims []corev1.ResourceClaim, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, c := range claims {
		p := fldPath.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case !pc.claimNames.Has(c.Name):
			errs = append(errs, field.NotFound(p.Child("name"), c.Name))
		}
		key := c.Name + "/" + c.Request
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(p, key))
		}
		seen.Insert(key)
	}
	return errs
}

// podLevelResources checks spec.resources, which only covers cpu, memory and
// hugepages.
func podLevelResources(r *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	errs := resourceRequirements(r, func(name corev1.ResourceName, p *field.Path) field.ErrorList {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || isHugePages(name) {
			return nil
		}
		return field.ErrorList{field.NotSupported(p, name, []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory), corev1.ResourceHugePagesPrefix + "*"})}
	}, fldPath)
	if len(r.Claims) > 0 {
		errs = append(errs, field.Forbidden(fldPath.Child("claims"), "claims cannot be set for Resources at pod-level"))
	}
	return errs
}

// sortedKeys gives map iteration a stable order so error lists are
// deterministic.
func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
