package resourcequota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/quota/v1/generic"
)

var serviceCount = generic.ObjectCountQuotaResourceNameFor(corev1.Resource("services"))

func newServiceEvaluator(list generic.ListFuncByNamespace) *evaluator {
	return &evaluator{
		gr:    corev1.Resource("services"),
		names: []corev1.ResourceName{corev1.ResourceServices, serviceCount, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers},
		list:  list,
		usage: serviceUsage,
		handles: func(a admission.Attributes) bool {
			// A type change can add node ports or a load balancer.
			return a.GetSubresource() == "" && (a.GetOperation() == admission.Create || a.GetOperation() == admission.Update)
		},
	}
}

func serviceUsage(obj runtime.Object) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T, want a Service", obj)
	}
	one := resource.MustParse("1")
	out := corev1.ResourceList{
		corev1.ResourceServices:              one,
		serviceCount:                         one,
		corev1.ResourceServicesNodePorts:     zero(),
		corev1.ResourceServicesLoadBalancers: zero(),
	}
	nodePorts := int64(0)
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		nodePorts = int64(distinctNodePorts(svc))
	case corev1.ServiceTypeLoadBalancer:
		out[corev1.ResourceServicesLoadBalancers] = one
		if svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts {
			nodePorts = int64(distinctNodePorts(svc))
		}
	}
	out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(nodePorts, resource.DecimalSI)
	return out, nil
}

// distinctNodePorts counts ports; a TCP and a UDP port sharing a node port
// number use one.
func distinctNodePorts(svc *corev1.Service) int {
	seen := map[int32]bool{}
	n := 0
	for _, p := range svc.Spec.Ports {
		if p.NodePort == 0 {
			n++
			continue
		}
		if !seen[p.NodePort] {
			seen[p.NodePort] = true
			n++
		}
	}
	return n
}
