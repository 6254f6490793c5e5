package app

import "testing"

func TestTopologyLabels(t *testing.T) {
	for _, tc := range []struct{ zone, region, want string }{
		{"", "", ""},
		{"z1", "", "topology.kubernetes.io/zone=z1"},
		{"z1", "r1", "topology.kubernetes.io/zone=z1,topology.kubernetes.io/region=r1"},
	} {
		if got := topologyLabels(tc.zone, tc.region); got != tc.want {
			t.Errorf("topologyLabels(%q, %q) = %q, want %q", tc.zone, tc.region, got, tc.want)
		}
	}
}
