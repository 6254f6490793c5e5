package nodeports

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func withPort(p *v1.Pod, ip string, port int32, proto v1.Protocol) *v1.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{HostIP: ip, HostPort: port, ContainerPort: port, Protocol: proto})
	return p
}

func TestFilter(t *testing.T) {
	existing := withPort(plugintest.Pod("e", "", "n"), "10.0.0.1", 8080, v1.ProtocolTCP)
	tests := []struct {
		name string
		pod  *v1.Pod
		fits bool
	}{
		{name: "no host ports", pod: plugintest.Pod("p", "", ""), fits: true},
		{name: "same ip, port and protocol", pod: withPort(plugintest.Pod("p", "", ""), "10.0.0.1", 8080, v1.ProtocolTCP), fits: false},
		{name: "0.0.0.0 conflicts with any ip", pod: withPort(plugintest.Pod("p", "", ""), "", 8080, v1.ProtocolTCP), fits: false},
		{name: "other ip", pod: withPort(plugintest.Pod("p", "", ""), "10.0.0.2", 8080, v1.ProtocolTCP), fits: true},
		{name: "other protocol", pod: withPort(plugintest.Pod("p", "", ""), "10.0.0.1", 8080, v1.ProtocolUDP), fits: true},
		{name: "other port", pod: withPort(plugintest.Pod("p", "", ""), "10.0.0.1", 9090, v1.ProtocolTCP), fits: true},
	}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, []*v1.Node{plugintest.Node("n", "4")}, []*v1.Pod{existing})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := h.Filter(t, tt.pod)
			if got["n"].IsSuccess() != tt.fits {
				t.Errorf("status %v, want fits=%v", got["n"], tt.fits)
			}
			if !tt.fits && got["n"].Message() != ErrReason {
				t.Errorf("reason %q", got["n"].Message())
			}
		})
	}
}

func TestQueueingHint(t *testing.T) {
	waiting := withPort(plugintest.Pod("w", "", ""), "", 8080, v1.ProtocolTCP)
	tests := []struct {
		name    string
		deleted *v1.Pod
		want    fwk.QueueingHint
	}{
		{name: "pod holding the port", deleted: withPort(plugintest.Pod("d", "", "n"), "10.0.0.1", 8080, v1.ProtocolTCP), want: fwk.Queue},
		{name: "pod holding another port", deleted: withPort(plugintest.Pod("d", "", "n"), "10.0.0.1", 9090, v1.ProtocolTCP), want: fwk.QueueSkip},
		{name: "pod holding the port over udp", deleted: withPort(plugintest.Pod("d", "", "n"), "10.0.0.1", 8080, v1.ProtocolUDP), want: fwk.QueueSkip},
		{name: "pod without host ports", deleted: plugintest.Pod("d", "", "n"), want: fwk.QueueSkip},
		{name: "unassigned pod", deleted: withPort(plugintest.Pod("d", "", ""), "", 8080, v1.ProtocolTCP), want: fwk.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := isSchedulableAfterPodDeleted(klog.Background(), waiting, tt.deleted, nil)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
