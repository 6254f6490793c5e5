package services

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func svc(typ corev1.ServiceType, clusterIP string, nodePorts ...int32) *corev1.Service {
	s := &corev1.Service{Spec: corev1.ServiceSpec{Type: typ, ClusterIP: clusterIP}}
	for i, np := range nodePorts {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: int32(80 + i), Protocol: corev1.ProtocolTCP, NodePort: np})
	}
	return s
}

func TestCarryAllocations(t *testing.T) {
	tests := []struct {
		name          string
		svc, old      *corev1.Service
		wantIP        string
		wantNodePorts []int
	}{
		{"cluster IP left out is kept", svc(corev1.ServiceTypeClusterIP, ""), svc(corev1.ServiceTypeClusterIP, "10.96.0.10"), "10.96.0.10", nil},
		{"node ports left out are kept", svc(corev1.ServiceTypeNodePort, "", 0, 0), svc(corev1.ServiceTypeNodePort, "10.96.0.10", 30001, 30002), "10.96.0.10", []int{30001, 30002}},
		{"a given node port wins", svc(corev1.ServiceTypeNodePort, "", 30005), svc(corev1.ServiceTypeNodePort, "10.96.0.10", 30001), "10.96.0.10", []int{30005}},
		{"type change to ClusterIP does not carry node ports", svc(corev1.ServiceTypeClusterIP, "", 0), svc(corev1.ServiceTypeNodePort, "10.96.0.10", 30001), "10.96.0.10", nil},
		{"headless stays headless", svc(corev1.ServiceTypeClusterIP, "None"), svc(corev1.ServiceTypeClusterIP, "None"), "None", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			carryAllocations(tt.svc, tt.old)
			if tt.svc.Spec.ClusterIP != tt.wantIP {
				t.Errorf("clusterIP = %q, want %q", tt.svc.Spec.ClusterIP, tt.wantIP)
			}
			if got := nodePortsOf(tt.svc); !reflect.DeepEqual(got, tt.wantNodePorts) {
				t.Errorf("node ports = %v, want %v", got, tt.wantNodePorts)
			}
		})
	}
}

func TestDroppedPorts(t *testing.T) {
	old := svc(corev1.ServiceTypeNodePort, "10.96.0.10", 30001, 30002)
	now := svc(corev1.ServiceTypeNodePort, "10.96.0.10", 30002)
	if got := droppedPorts(now, old); !reflect.DeepEqual(got, []int{30001}) {
		t.Errorf("dropped = %v, want [30001]", got)
	}
	if got := droppedPorts(svc(corev1.ServiceTypeClusterIP, "10.96.0.10"), old); !reflect.DeepEqual(got, []int{30001, 30002}) {
		t.Errorf("dropped on type change = %v", got)
	}
}

func TestNeeds(t *testing.T) {
	no := false
	lbNoPorts := svc(corev1.ServiceTypeLoadBalancer, "")
	lbNoPorts.Spec.AllocateLoadBalancerNodePorts = &no
	local := svc(corev1.ServiceTypeLoadBalancer, "")
	local.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	tests := []struct {
		name                      string
		svc                       *corev1.Service
		clusterIP, nodePorts, hcp bool
	}{
		{"ClusterIP", svc(corev1.ServiceTypeClusterIP, ""), true, false, false},
		{"headless", svc(corev1.ServiceTypeClusterIP, "None"), false, false, false},
		{"NodePort", svc(corev1.ServiceTypeNodePort, ""), true, true, false},
		{"LoadBalancer", svc(corev1.ServiceTypeLoadBalancer, ""), true, true, false},
		{"LoadBalancer without node ports", lbNoPorts, true, false, false},
		{"LoadBalancer Local", local, true, true, true},
		{"ExternalName", svc(corev1.ServiceTypeExternalName, ""), false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := needsClusterIP(tt.svc); got != tt.clusterIP {
				t.Errorf("needsClusterIP = %v", got)
			}
			if got := needsNodePorts(tt.svc); got != tt.nodePorts {
				t.Errorf("needsNodePorts = %v", got)
			}
			if got := needsHealthCheckPort(tt.svc); got != tt.hcp {
				t.Errorf("needsHealthCheckPort = %v", got)
			}
		})
	}
}
