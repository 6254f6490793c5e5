package upgrade

import (
	"errors"
	"testing"
)

func v(t *testing.T, s string) Version {
	t.Helper()
	out, err := ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckSkew(t *testing.T) {
	for _, tc := range []struct {
		name            string
		current, target string
		kubelets        map[string]string
		force, refused  bool
	}{
		{name: "same version", current: "v1.37.0-trireme.dev", target: "v1.37.0-trireme.dev"},
		{name: "patch upgrade", current: "v1.37.0", target: "v1.37.2-trireme.dev"},
		{name: "one minor up", current: "v1.37.0", target: "v1.38.0", kubelets: map[string]string{"a": "v1.37.0"}},
		{name: "two minors up", current: "v1.37.0", target: "v1.39.0", refused: true},
		{name: "two minors up forced", current: "v1.37.0", target: "v1.39.0", force: true, refused: true},
		{name: "major change", current: "v1.37.0", target: "v2.0.0", refused: true},
		{name: "patch downgrade", current: "v1.37.3", target: "v1.37.1"},
		{name: "minor downgrade", current: "v1.37.0", target: "v1.36.0", refused: true},
		{name: "minor downgrade forced", current: "v1.37.0", target: "v1.36.0", force: true},
		{name: "two minors down forced", current: "v1.37.0", target: "v1.35.0", force: true, refused: true},
		{name: "kubelet 3 minors older", current: "v1.37.0", target: "v1.38.0", kubelets: map[string]string{"w": "v1.35.4"}},
		{name: "kubelet 4 minors older", current: "v1.37.0", target: "v1.38.0", kubelets: map[string]string{"w": "v1.34.0"}, refused: true},
		{name: "kubelet newer than target", current: "v1.37.0", target: "v1.37.0", kubelets: map[string]string{"w": "v1.38.0"}, refused: true},
		{name: "kubelet newer than target forced", current: "v1.37.0", target: "v1.37.0", kubelets: map[string]string{"w": "v1.38.0"}, force: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kubelets := map[string]Version{}
			for n, s := range tc.kubelets {
				kubelets[n] = v(t, s)
			}
			err := CheckSkew(v(t, tc.current), v(t, tc.target), kubelets, tc.force)
			if tc.refused != (err != nil) {
				t.Fatalf("refused = %v, want %v (err %v)", err != nil, tc.refused, err)
			}
			if err != nil && !errors.Is(err, ErrSkew) {
				t.Fatalf("error does not quote the policy: %v", err)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	for _, s := range []string{"1.2", "latest", "v1.x.0", ""} {
		if _, err := ParseVersion(s); err == nil {
			t.Errorf("ParseVersion(%q) accepted", s)
		}
	}
	got := v(t, "v1.37.2-trireme.dev")
	if got.Major != 1 || got.Minor != 37 || got.Patch != 2 || got.String() != "v1.37.2-trireme.dev" {
		t.Errorf("got %+v", got)
	}
}

func TestCheckKubelet(t *testing.T) {
	for _, tc := range []struct {
		name, kubelet, apiserver string
		refused                  bool
	}{
		{name: "same version", kubelet: "v1.37.0-trireme.b", apiserver: "v1.37.0-trireme.a"},
		{name: "one minor older", kubelet: "v1.36.0", apiserver: "v1.37.0"},
		{name: "newer minor", kubelet: "v1.38.0", apiserver: "v1.37.0", refused: true},
		{name: "4 minors older", kubelet: "v1.33.0", apiserver: "v1.37.0", refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckKubelet("w1", v(t, tc.kubelet), v(t, tc.apiserver))
			if tc.refused != (err != nil) || (err != nil && !errors.Is(err, ErrSkew)) {
				t.Fatalf("CheckKubelet = %v, refused want %v", err, tc.refused)
			}
		})
	}
}
