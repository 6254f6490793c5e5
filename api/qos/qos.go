// Package qos computes a pod's quality-of-service class, which the API
// server records in status.qosClass and the kubelet sizes cgroups and
// eviction order by: one computation, so the two never disagree.
package qos

import (
	corev1 "k8s.io/api/core/v1"
)

// PodQOSClass is the pod's class, as upstream computes it. Only cpu and
// memory count, and only above zero. Pod-level resources, when set, stand
// for the containers'. Otherwise the requests and limits of the app and init
// containers are summed per resource: the pod is BestEffort with none,
// Guaranteed when every container limits both cpu and memory and the summed
// requests equal the summed limits, Burstable otherwise. A request left out
// is its limit, as defaulting makes it.
func PodQOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	add := func(r corev1.ResourceRequirements) {
		sum(requests, defaulted(r))
		if !sum(limits, r.Limits) {
			guaranteed = false
		}
	}
	if pod.Spec.Resources != nil {
		add(*pod.Spec.Resources)
	} else {
		for _, c := range pod.Spec.Containers {
			add(c.Resources)
		}
		for _, c := range pod.Spec.InitContainers {
			add(c.Resources)
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if !guaranteed || len(requests) != len(limits) {
		return corev1.PodQOSBurstable
	}
	for name, req := range requests {
		if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
			return corev1.PodQOSBurstable
		}
	}
	return corev1.PodQOSGuaranteed
}

// defaulted is r's requests with each limit standing for a missing
// request, as the API server's defaulting sets them before any pod is
// stored; so a pod not yet defaulted has the class it will have.
func defaulted(r corev1.ResourceRequirements) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range r.Limits {
		out[name] = q
	}
	for name, q := range r.Requests {
		out[name] = q
	}
	return out
}

// sum adds list's cpu and memory above zero into total, and says whether
// list had both.
func sum(total, list corev1.ResourceList) (both bool) {
	found := 0
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := list[name]
		if !ok || q.Sign() <= 0 {
			continue
		}
		found++
		t := total[name]
		t.Add(q)
		total[name] = t
	}
	return found == 2
}
