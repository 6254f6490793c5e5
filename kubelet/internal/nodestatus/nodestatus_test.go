package nodestatus

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"trireme.dev/kubelet/internal/system"
)

func TestAllocatable(t *testing.T) {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
	}
	tests := []struct {
		name                   string
		kube, system, eviction map[string]string
		want                   map[corev1.ResourceName]string
	}{
		{"nothing reserved", nil, nil, nil, map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "8Gi"}},
		{"reservations and hard eviction", map[string]string{"cpu": "500m", "memory": "1Gi"}, map[string]string{"cpu": "500m"}, map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"},
			map[corev1.ResourceName]string{corev1.ResourceCPU: "3", corev1.ResourceMemory: "7068Mi", corev1.ResourceEphemeralStorage: "90Gi", corev1.ResourcePods: "110"}},
		{"never negative", map[string]string{"cpu": "8"}, nil, nil, map[corev1.ResourceName]string{corev1.ResourceCPU: "0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Allocatable(capacity, tc.kube, tc.system, tc.eviction)
			for r, w := range tc.want {
				q := got[r]
				if q.Cmp(resource.MustParse(w)) != 0 {
					t.Errorf("%s = %s, want %s", r, q.String(), w)
				}
			}
		})
	}
}

func TestSplitAddresses(t *testing.T) {
	tests := []struct {
		name      string
		addrs     []corev1.NodeAddress
		wantHosts []string
		wantIPs   []string
	}{
		{"none", nil, nil, nil},
		{"ip and hostname", []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: "n1"}}, []string{"n1"}, []string{"10.0.0.1"}},
		{"duplicates and dns", []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeInternalDNS, Address: "n1.local"}, {Type: corev1.NodeHostName, Address: "n1.local"}}, []string{"n1.local"}, []string{"10.0.0.1"}},
		{"bad ip dropped", []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "nope"}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts, ips := SplitAddresses(tt.addrs)
			var gotIPs []string
			for _, ip := range ips {
				gotIPs = append(gotIPs, ip.String())
			}
			if fmt.Sprint(hosts) != fmt.Sprint(tt.wantHosts) || fmt.Sprint(gotIPs) != fmt.Sprint(tt.wantIPs) {
				t.Errorf("got %v %v, want %v %v", hosts, gotIPs, tt.wantHosts, tt.wantIPs)
			}
		})
	}
}

func TestPressureCondition(t *testing.T) {
	cond := func(ty corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: ty, Status: s, Reason: reason, Message: msg}
	}
	tests := []struct {
		under      bool
		wantStatus corev1.ConditionStatus
		wantReason string
	}{
		{false, corev1.ConditionFalse, "KubeletHasSufficientMemory"},
		{true, corev1.ConditionTrue, "KubeletHasInsufficientMemory"},
	}
	for _, tt := range tests {
		c := pressureCondition(cond, corev1.NodeMemoryPressure, tt.under, "KubeletHasSufficientMemory", "ok", "KubeletHasInsufficientMemory", "low")
		if c.Status != tt.wantStatus || c.Reason != tt.wantReason {
			t.Errorf("under=%v: %+v", tt.under, c)
		}
	}
}

func TestForeignConditions(t *testing.T) {
	c := func(t corev1.NodeConditionType) corev1.NodeCondition { return corev1.NodeCondition{Type: t} }
	for _, tc := range []struct {
		name string
		in   []corev1.NodeCondition
		want []corev1.NodeConditionType
	}{
		{"none", nil, nil},
		{"the kubelet's only", []corev1.NodeCondition{c(corev1.NodeReady), c(corev1.NodeMemoryPressure), c(corev1.NodeDiskPressure), c(corev1.NodePIDPressure)}, nil},
		{"a network plugin's kept", []corev1.NodeCondition{c(corev1.NodeReady), c(corev1.NodeNetworkUnavailable)}, []corev1.NodeConditionType{corev1.NodeNetworkUnavailable}},
		{"any other kept", []corev1.NodeCondition{c("KernelDeadlock"), c(corev1.NodeReady), c(corev1.NodeNetworkUnavailable)},
			[]corev1.NodeConditionType{"KernelDeadlock", corev1.NodeNetworkUnavailable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []corev1.NodeConditionType
			for _, c := range foreignConditions(tc.in) {
				got = append(got, c.Type)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("foreignConditions = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeAllocatable(t *testing.T) {
	m := New(Config{RootDir: t.TempDir(), MaxPods: 110, KubeReserved: map[string]string{"cpu": "1"}}, nil, nil, nil, system.MachineInfo{CPUs: 4, MemoryBytes: 8 << 30}, logr.Discard())
	tests := []struct {
		name     string
		written  *corev1.NodeStatus
		wantCPU  string
		wantPods string
	}{
		{name: "computed before the first status is written", wantCPU: "3", wantPods: "110"},
		{name: "as last written", written: &corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")}}, wantCPU: "2500m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m.lastStatus = tc.written
			got := m.NodeAllocatable()
			if q := got[corev1.ResourceCPU]; q.Cmp(resource.MustParse(tc.wantCPU)) != 0 {
				t.Errorf("cpu = %s, want %s", q.String(), tc.wantCPU)
			}
			if q, ok := got[corev1.ResourcePods]; tc.wantPods != "" && (!ok || q.Cmp(resource.MustParse(tc.wantPods)) != 0) {
				t.Errorf("pods = %s, want %s", q.String(), tc.wantPods)
			}
		})
	}
}
