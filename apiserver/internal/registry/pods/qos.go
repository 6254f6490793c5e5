package pods

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// QOSClass computes a pod's quality-of-service class from its cpu and memory
// requests and limits, as the kubelet and scheduler read it: Guaranteed when
// every container limits both and requests equal limits, BestEffort when
// nothing is requested or limited, Burstable otherwise.
func QOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	compute := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	var reqs []corev1.ResourceRequirements
	if pod.Spec.Resources != nil {
		reqs = append(reqs, *pod.Spec.Resources)
	} else {
		for _, c := range pod.Spec.InitContainers {
			reqs = append(reqs, c.Resources)
		}
		for _, c := range pod.Spec.Containers {
			reqs = append(reqs, c.Resources)
		}
	}
	any, guaranteed := false, true
	for _, r := range reqs {
		for _, name := range compute {
			req, hasReq := r.Requests[name]
			lim, hasLim := r.Limits[name]
			if (hasReq && !req.IsZero()) || (hasLim && !lim.IsZero()) {
				any = true
			}
			if !hasLim || lim.IsZero() {
				guaranteed = false
				continue
			}
			if hasReq && !equal(req, lim) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	default:
		return corev1.PodQOSBurstable
	}
}

func equal(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }
