package nodestatus

import (
	"context"
	"net"
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	critest "k8s.io/cri-api/pkg/apis/testing"

	"trireme.dev/kubelet/internal/system"
)

// TestExternalCloudProvider registers nodes as upstream's kubelet does
// with and without --cloud-provider=external.
func TestExternalCloudProvider(t *testing.T) {
	ip := net.ParseIP("10.0.0.7")
	uninitialized := corev1.Taint{Key: TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}
	ccmAddresses := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.7"}, {Type: corev1.NodeHostName, Address: "n"}}
	for _, tc := range []struct {
		name       string
		cfg        Config
		taints     []corev1.Taint
		annotation string // "" for none
		existing   []corev1.NodeAddress
		addresses  []corev1.NodeAddress
	}{
		{
			name: "no cloud provider", cfg: Config{NodeIPs: []net.IP{ip}, ProvidedNodeIPs: []net.IP{ip}},
			addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeHostName, Address: "n"}},
		},
		{
			name: "external with --node-ip", cfg: Config{NodeIPs: []net.IP{ip}, ProvidedNodeIPs: []net.IP{ip}, ExternalCloudProvider: true,
				Taints: []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoExecute}}},
			taints:     []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoExecute}, uninitialized},
			annotation: "10.0.0.7",
			addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeHostName, Address: "n"}},
		},
		{
			name: "external without --node-ip", cfg: Config{NodeIPs: []net.IP{ip}, ExternalCloudProvider: true},
			taints:    []corev1.Taint{uninitialized},
			addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeHostName, Address: "n"}},
		},
		{
			name: "external keeps the controller's addresses", cfg: Config{NodeIPs: []net.IP{ip}, ProvidedNodeIPs: []net.IP{ip}, ExternalCloudProvider: true},
			taints: []corev1.Taint{uninitialized}, annotation: "10.0.0.7",
			existing: ccmAddresses, addresses: ccmAddresses,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.NodeName = "n"
			m := New(tc.cfg, fake.NewClientset(), critest.NewFakeRuntimeService(), critest.NewFakeImageService(), system.MachineInfo{}, logr.Discard())
			n := m.InitialNode()
			if !reflect.DeepEqual(n.Spec.Taints, tc.taints) {
				t.Errorf("taints %v, want %v", n.Spec.Taints, tc.taints)
			}
			if got, ok := n.Annotations[AnnotationProvidedNodeIP]; got != tc.annotation || ok != (tc.annotation != "") {
				t.Errorf("provided-node-ip annotation %q (set %v), want %q", got, ok, tc.annotation)
			}
			var existing *corev1.Node
			if tc.existing != nil {
				existing = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Addresses: tc.existing}}
			}
			st := m.computeStatus(context.Background(), existing)
			if !reflect.DeepEqual(st.Addresses, tc.addresses) {
				t.Errorf("addresses %v, want %v", st.Addresses, tc.addresses)
			}
		})
	}
}
