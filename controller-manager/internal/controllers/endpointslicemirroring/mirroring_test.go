package endpointslicemirroring

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func addrs(prefix string, n int) []corev1.EndpointAddress {
	out := make([]corev1.EndpointAddress, n)
	for i := range out {
		out[i].IP = fmt.Sprintf(prefix, i)
	}
	return out
}

func TestDesired(t *testing.T) {
	port := []corev1.EndpointPort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}
	tests := []struct {
		name          string
		subsets       []corev1.EndpointSubset
		max           int
		wantSlices    int
		wantTotal     int
		wantReady     int
		wantTypes     map[discoveryv1.AddressType]int
		wantTruncated bool
	}{
		{"ready and not ready", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.%d", 2), NotReadyAddresses: addrs("10.0.1.%d", 1), Ports: port}},
			1000, 1, 3, 2, map[discoveryv1.AddressType]int{discoveryv1.AddressTypeIPv4: 1}, false},
		{"IPv4 and IPv6 split", []corev1.EndpointSubset{{Addresses: append(addrs("10.0.0.%d", 1), addrs("fd00::%d", 1)...), Ports: port}},
			1000, 2, 2, 2, map[discoveryv1.AddressType]int{discoveryv1.AddressTypeIPv4: 1, discoveryv1.AddressTypeIPv6: 1}, false},
		{"invalid address skipped", []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "not-an-ip"}, {IP: "10.0.0.1"}}, Ports: port}},
			1000, 1, 1, 1, nil, false},
		{"150 addresses take two slices", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.%d", 150), Ports: port}},
			1000, 2, 150, 150, nil, false},
		{"subset over the maximum is truncated", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.%d", 20), Ports: port}},
			10, 1, 10, 10, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns", UID: "ep-uid",
				Labels: map[string]string{"team": "a"}, Annotations: map[string]string{corev1.EndpointsLastChangeTriggerTime: "x", "note": "kept"}},
				Subsets: tt.subsets}
			got, truncated := Desired(ep, tt.max)
			if truncated != tt.wantTruncated {
				t.Errorf("truncated = %v, want %v", truncated, tt.wantTruncated)
			}
			total, ready := 0, 0
			types := map[discoveryv1.AddressType]int{}
			for _, s := range got {
				types[s.AddressType]++
				if s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels[discoveryv1.LabelServiceName] != "svc" || s.Labels["team"] != "a" {
					t.Errorf("labels %v", s.Labels)
				}
				if _, ok := s.Annotations[corev1.EndpointsLastChangeTriggerTime]; ok || s.Annotations["note"] != "kept" {
					t.Errorf("annotations %v", s.Annotations)
				}
				if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != "ep-uid" {
					t.Errorf("owner references %v", s.OwnerReferences)
				}
				for _, e := range s.Endpoints {
					total++
					if *e.Conditions.Ready {
						ready++
					}
				}
			}
			if len(got) != tt.wantSlices || total != tt.wantTotal || ready != tt.wantReady {
				t.Errorf("slices %d total %d ready %d; want %d, %d, %d", len(got), total, ready, tt.wantSlices, tt.wantTotal, tt.wantReady)
			}
			for at, n := range tt.wantTypes {
				if types[at] != n {
					t.Errorf("%s slices = %d, want %d", at, types[at], n)
				}
			}
		})
	}
}
