package paths

import "testing"

func TestIn(t *testing.T) {
	tests := []struct{ root, in, want string }{
		{"", "/etc/trireme", "/etc/trireme"},
		{"/", "/etc/trireme", "/etc/trireme"},
		{"/tmp/r", "/etc/trireme", "/tmp/r/etc/trireme"},
		{"/tmp/r", "/tmp/r/etc/trireme", "/tmp/r/etc/trireme"},
	}
	for _, tt := range tests {
		if got := (Paths{Root: tt.root}).In(tt.in); got != tt.want {
			t.Errorf("Paths{%q}.In(%q) = %q, want %q", tt.root, tt.in, got, tt.want)
		}
	}
	p := Paths{Root: "/r"}
	if p.Kubeconfig("admin.conf") != "/r/etc/trireme/admin.conf" || p.PIDFile("containerd") != "/r/var/run/trireme/containerd.pid" ||
		p.ContainerdSocket() != "/r/run/containerd/containerd.sock" || p.ManifestsDir() != "/r/etc/trireme/manifests" {
		t.Error("rooted well-known paths wrong")
	}
}
