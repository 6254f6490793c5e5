package workernodes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "no command", args: nil, wantErr: "usage"},
		{name: "unknown command", args: []string{"sideways"}, wantErr: "usage"},
		{name: "up without a number", args: []string{"up"}, wantErr: "usage"},
		{name: "up with zero", args: []string{"up", "0"}, wantErr: "1-50"},
		{name: "up with a word", args: []string{"up", "two"}, wantErr: "1-50"},
		{name: "up without init's output", args: []string{"up", "2", "--state-dir", "/nonexistent/trireme-nodes"}, wantErr: "--init-output"},
		{name: "down with an argument", args: []string{"down", "now"}, wantErr: "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.args, strings.NewReader(""), &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Run(%v) = %v, want an error with %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestNodeAddresses(t *testing.T) {
	o := Options{StateDir: "/var/lib/trireme-nodes"}
	sw := newSwitch(0)
	for i, want := range map[int]string{1: "10.213.9.2", 2: "10.213.9.3", 50: "10.213.9.51"} {
		n := node(o, sw, i)
		if n.IP.String() != want {
			t.Errorf("node %d: IP %s, want %s", i, n.IP, want)
		}
		if !strings.HasPrefix(n.Root, o.StateDir+"/"+n.Name) || len(n.Port) > 15 { // an interface name
			t.Errorf("node %d: root %s, port %s", i, n.Root, n.Port)
		}
	}
}

func TestDiskPolicy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	host := `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/trireme/manifests
syncFrequency: 10s
evictionHard: {"imagefs.available": "2%", "nodefs.available": "2%"}
imageGCHighThresholdPercent: 99
`
	if err := os.WriteFile(file, []byte(host), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := diskPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kubelet.config.k8s.io/v1beta1
evictionHard:
  imagefs.available: 2%
  nodefs.available: 2%
imageGCHighThresholdPercent: 99
kind: KubeletConfiguration
`
	if got != want {
		t.Errorf("disk policy:\n%s\nwant (the host's disk settings only, no static pods):\n%s", got, want)
	}
	if _, err := diskPolicy(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing host configuration gave no error")
	}
}
