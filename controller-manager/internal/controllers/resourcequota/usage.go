package resourcequota

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// add sums b into a.
func add(a, b corev1.ResourceList) {
	for name, q := range b {
		sum := a[name]
		sum.Add(q)
		a[name] = sum
	}
}

// equalLists compares two lists by quantity value, not by spelling: "1"
// and "1000m" are the same usage.
func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

func one() resource.Quantity { return *resourceQuantity(1) }

// podCharged reports whether pod still holds quota: pods that have finished,
// and pods whose deletion grace period has run out, no longer do.
func podCharged(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		end := pod.DeletionTimestamp.Add(time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
		if now.After(end) {
			return false
		}
	}
	return true
}

// podUsage is what one charged pod adds to every pod resource name.
func podUsage(pod *corev1.Pod) corev1.ResourceList {
	// In-place resize is on in 1.37: what the kubelet reports as actuated
	// counts when it exceeds the spec, as upstream's evaluator does.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
	requests := resourcehelper.PodRequests(pod, opts)
	limits := resourcehelper.PodLimits(pod, opts)
	out := corev1.ResourceList{corev1.ResourcePods: one(), "count/pods": one()}
	for name, q := range requests {
		switch {
		case name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage ||
			strings.HasPrefix(string(name), hugePagesPrefix):
			out[name] = q
			out[corev1.ResourceName(requestsPrefix+string(name))] = q
		case strings.Contains(string(name), "/"):
			out[corev1.ResourceName(requestsPrefix+string(name))] = q
		}
	}
	for name, q := range limits {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage {
			out[corev1.ResourceName(limitsPrefix+string(name))] = q
		}
	}
	return out
}

// serviceUsage is what one Service adds: node ports for the types that
// open them, and one load balancer for type LoadBalancer.
func serviceUsage(svc *corev1.Service) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourceServices: one(), "count/services": one()}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		// With node port allocation turned off only the ports that ask for
		// one explicitly use one.
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		out[corev1.ResourceServicesLoadBalancers] = one()
	}
	return out
}

// claimUsage is what one PersistentVolumeClaim adds, overall and under its
// storage class.
func claimUsage(pvc *corev1.PersistentVolumeClaim) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: one(), "count/persistentvolumeclaims": one()}
	storage := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	// A failed expansion can leave more allocated than now requested; the
	// larger figure is what the claim holds.
	if allocated, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && allocated.Cmp(storage) > 0 {
		storage = allocated
	}
	out[corev1.ResourceRequestsStorage] = storage
	// The beta annotation, where still present, wins over the field, as in
	// every other upstream reader of a claim's class.
	class, ok := pvc.Annotations[betaStorageClassAnnot]
	if !ok && pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class != "" {
		prefix := class + storageClassSuffix
		out[corev1.ResourceName(prefix+string(corev1.ResourceRequestsStorage))] = storage
		out[corev1.ResourceName(prefix+string(corev1.ResourcePersistentVolumeClaims))] = one()
	}
	return out
}

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }
