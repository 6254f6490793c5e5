package conntrack

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"trireme.dev/proxy/internal/model"
)

func TestArgs(t *testing.T) {
	tests := []struct {
		name string
		flow model.StaleFlow
		want string
	}{
		{"service IP to a removed endpoint", model.StaleFlow{ServiceIP: netip.MustParseAddr("10.96.0.10"), Port: 53, Endpoint: netip.MustParseAddr("10.244.1.5")},
			"-D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53 --dst-nat 10.244.1.5"},
		{"service IP that got endpoints", model.StaleFlow{ServiceIP: netip.MustParseAddr("10.96.0.10"), Port: 53},
			"-D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53"},
		{"node port to a removed endpoint", model.StaleFlow{NodePort: 30053, Endpoint: netip.MustParseAddr("10.244.1.5")},
			"-D -p udp --orig-port-dst 30053 --dst-nat 10.244.1.5"},
		{"IPv6 service IP", model.StaleFlow{ServiceIP: netip.MustParseAddr("fd00::10"), Port: 53},
			"-D -p udp -f ipv6 --orig-dst fd00::10 --orig-port-dst 53"},
		{"IPv6 node port that got endpoints", model.StaleFlow{NodePort: 30053, ServiceIP: netip.MustParseAddr("fd00::10")},
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
	flows := []model.StaleFlow{{NodePort: 1}, {NodePort: 2}}
	if err := Clear(context.Background(), run, flows); err == nil {
		t.Error("first failure not reported")
	}
	if !slices.Equal(calls, []string{"-D -p udp --orig-port-dst 1", "-D -p udp --orig-port-dst 2"}) {
		t.Errorf("calls = %v", calls)
	}
}
