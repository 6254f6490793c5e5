package defaults

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PodLevelResources completes the pod-level resources (spec.resources) of a
// pod that sets any of them, from the resources of its containers:
//
//  1. hugepage limits missing at pod level (and not requested there) become
//     the containers' aggregated hugepage limits;
//  2. missing pod-level requests become the containers' aggregated requests
//     for CPU and memory, and otherwise the pod-level limit;
//  3. a missing pod-level limit becomes the larger of the pod-level request
//     and the containers' aggregated limit, when every container has a limit
//     for that resource (a container without one could use the whole node).
//
// Since 1.37 upstream runs this in the pod registry's PrepareForCreate, after
// admission webhooks have added their containers, instead of while decoding;
// so it is not registered with the scheme and the pod registry calls it. The
// PodLevelResources feature it belongs to is on by default.
func PodLevelResources(p *corev1.Pod) {
	r := p.Spec.Resources
	if r == nil || len(r.Requests) == 0 && len(r.Limits) == 0 {
		return
	}
	requests := copyResourceList(r.Requests)
	limits := copyResourceList(r.Limits)
	containerRequests := aggregateContainers(&p.Spec, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests })
	containerLimits := aggregateContainers(&p.Spec, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits })

	for name, q := range containerLimits {
		_, requested := requests[name]
		_, limited := limits[name]
		if isHugePages(name) && !requested && !limited {
			limits[name] = q.DeepCopy()
		}
	}
	for name, q := range containerRequests {
		if _, ok := requests[name]; !ok && isPodLevelResource(name) && overcommitAllowed(name) {
			requests[name] = q.DeepCopy()
		}
	}
	for name, q := range limits {
		if _, ok := requests[name]; !ok && isPodLevelResource(name) {
			requests[name] = q.DeepCopy()
		}
	}
	for name, q := range containerLimits {
		if _, ok := limits[name]; ok || !isPodLevelResource(name) || !allContainersLimit(&p.Spec, name) {
			continue
		}
		limit := q.DeepCopy()
		if req, ok := requests[name]; ok && req.Cmp(limit) > 0 {
			limit = req.DeepCopy()
		}
		limits[name] = limit
	}
	if len(requests) > 0 {
		r.Requests = requests
	}
	if len(limits) > 0 {
		r.Limits = limits
	}
}

// aggregateContainers sums what list returns over the regular containers and
// the sidecars (restartable init containers), then raises each resource to
// what the pod needs while its heaviest init container runs: that container
// plus the sidecars started before it.
func aggregateContainers(s *corev1.PodSpec, list func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range s.Containers {
		addResourceList(total, list(&s.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initPeak := corev1.ResourceList{}
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		running := corev1.ResourceList{}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResourceList(total, list(c))
			addResourceList(sidecars, list(c))
			addResourceList(running, sidecars)
		} else {
			addResourceList(running, list(c))
			addResourceList(running, sidecars)
		}
		maxResourceList(initPeak, running)
	}
	maxResourceList(total, initPeak)
	return total
}

// allContainersLimit reports whether every regular and init container sets a
// limit for name.
func allContainersLimit(s *corev1.PodSpec, name corev1.ResourceName) bool {
	for _, cs := range [][]corev1.Container{s.Containers, s.InitContainers} {
		for i := range cs {
			if _, ok := cs[i].Resources.Limits[name]; !ok {
				return false
			}
		}
	}
	return true
}

func addResourceList(into, from corev1.ResourceList) {
	for name, q := range from {
		if sum, ok := into[name]; ok {
			sum.Add(q)
			into[name] = sum
		} else {
			into[name] = q.DeepCopy()
		}
	}
}

func maxResourceList(into, from corev1.ResourceList) {
	for name, q := range from {
		if cur, ok := into[name]; !ok || q.Cmp(cur) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}

func copyResourceList(l corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(l))
	for name, q := range l {
		out[name] = q.DeepCopy()
	}
	return out
}

// isPodLevelResource reports whether name may be set in spec.resources:
// CPU, memory and hugepages.
func isPodLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || isHugePages(name)
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// overcommitAllowed reports whether requests of name may be lower than its
// limits: native resources other than hugepages.
func overcommitAllowed(name corev1.ResourceName) bool {
	native := !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
	return native && !isHugePages(name)
}
