package reset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIsShimOf(t *testing.T) {
	const sock = "/var/lib/trireme-nodes/w1/run/containerd/containerd.sock"
	for _, tt := range []struct {
		name string
		args []string
		want bool
	}{
		{"runc v2 shim of this containerd", []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", sock}, true},
		{"address with =", []string{"containerd-shim-runc-v2", "-address=" + sock}, true},
		{"another containerd's shim", []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", "/run/containerd/containerd.sock"}, false},
		{"not a shim", []string{"/usr/bin/containerd", "-address", sock}, false},
		{"no address", []string{"/usr/bin/containerd-shim-runc-v2", "-id", "abc"}, false},
		{"address last, no value", []string{"/usr/bin/containerd-shim-runc-v2", "-address"}, false},
		{"empty", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := isShimOf(tt.args, sock); got != tt.want {
				t.Errorf("isShimOf(%q) = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}

func TestShimsOf(t *testing.T) {
	const sock = "/run/containerd/containerd.sock"
	proc := t.TempDir()
	for pid, args := range map[string][]string{
		"101":  {"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "a", "-address", sock},
		"102":  {"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "b", "-address", "/other.sock"},
		"103":  {"/usr/bin/containerd", "--config", "/etc/containerd/config.toml"},
		"self": {"/usr/bin/containerd-shim-runc-v2", "-address", sock},
	} {
		dir := filepath.Join(proc, pid)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A process gone between the listing and the read.
	if err := os.Mkdir(filepath.Join(proc, "104"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := shimsOf(proc, sock)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{101}; !slices.Equal(got, want) {
		t.Errorf("shimsOf = %v, want %v", got, want)
	}
}
