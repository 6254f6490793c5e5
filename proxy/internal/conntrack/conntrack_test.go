package conntrack

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"trireme.dev/proxy/internal/model"
)

func TestArgs(t *testing.T) {
	tests := []struct {
		name string
		flow model.StaleFlow
		want string
	}{
		{"service IP to a removed endpoint", model.StaleFlow{Protocol: corev1.ProtocolUDP, ServiceIP: netip.MustParseAddr("10.96.0.10"), Port: 53, Endpoint: netip.MustParseAddr("10.244.1.5")},
			"-D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53 --dst-nat 10.244.1.5"},
		{"service IP that got endpoints", model.StaleFlow{Protocol: corev1.ProtocolUDP, ServiceIP: netip.MustParseAddr("10.96.0.10"), Port: 53},
			"-D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53"},
		{"node port to a removed endpoint", model.StaleFlow{Protocol: corev1.ProtocolUDP, NodePort: 30053, Endpoint: netip.MustParseAddr("10.244.1.5")},
			"-D -p udp --orig-port-dst 30053 --dst-nat 10.244.1.5"},
		{"IPv6 service IP", model.StaleFlow{Protocol: corev1.ProtocolUDP, ServiceIP: netip.MustParseAddr("fd00::10"), Port: 53},
			"-D -p udp -f ipv6 --orig-dst fd00::10 --orig-port-dst 53"},
		{"TCP: service IP to a gone endpoint", model.StaleFlow{Protocol: corev1.ProtocolTCP, ServiceIP: netip.MustParseAddr("172.29.254.2"), Port: 80, Endpoint: netip.MustParseAddr("10.244.0.12")},
			"-D -p tcp --orig-dst 172.29.254.2 --orig-port-dst 80 --dst-nat 10.244.0.12"},
		{"IPv6 node port that got endpoints", model.StaleFlow{Protocol: corev1.ProtocolUDP, NodePort: 30053, ServiceIP: netip.MustParseAddr("fd00::10")},
			"-D -p udp -f ipv6 --orig-port-dst 30053"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(Args(tt.flow), " "); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClearGoesOnPastFailures(t *testing.T) {
	var calls []string
	run := func(_ context.Context, args ...string) error {
		calls = append(calls, strings.Join(args, " "))
		if len(calls) == 1 {
			return context.DeadlineExceeded
		}
		return nil
	}
	flows := []model.StaleFlow{{Protocol: corev1.ProtocolUDP, NodePort: 1}, {Protocol: corev1.ProtocolTCP, NodePort: 2}}
	if err := Clear(context.Background(), run, flows); err == nil {
		t.Error("first failure not reported")
	}
	if !slices.Equal(calls, []string{"-D -p udp --orig-port-dst 1", "-D -p tcp --orig-port-dst 2"}) {
		t.Errorf("calls = %v", calls)
	}
}
