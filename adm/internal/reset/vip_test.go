package reset

import (
	"net"
	"testing"

	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/options"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/staticpod"
)

type recordingNetwork struct{ deleted []string }

func (r *recordingNetwork) Add(string, net.IP) error      { return nil }
func (r *recordingNetwork) Announce(string, net.IP) error { return nil }
func (r *recordingNetwork) Delete(iface string, ip net.IP) error {
	r.deleted = append(r.deleted, iface+"/"+ip.String())
	return nil
}

func TestRemoveVIP(t *testing.T) {
	tests := []struct {
		name    string
		vip     *v1alpha1.VirtualIP
		wantOK  bool
		deleted string
	}{
		{name: "no VIP manager"},
		{name: "VIP manager with its interface", vip: &v1alpha1.VirtualIP{Interface: "eth9"}, wantOK: true, deleted: "eth9/10.0.0.100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			o := &options.Init{}
			cfg, err := o.Resolve(nil, root, options.Environment{
				Hostname:       func() (string, error) { return "cp", nil },
				DefaultAddress: func() (net.IP, error) { return net.ParseIP("10.0.0.2"), nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Cluster.ControlPlaneEndpoint, cfg.Cluster.VirtualIP = "10.0.0.100:6443", tt.vip
			if tt.vip != nil {
				if _, err := staticpod.Write(cfg, staticpod.VIPManager); err != nil {
					t.Fatal(err)
				}
			}
			n := &recordingNetwork{}
			ok, err := RemoveVIP(Inputs{Paths: paths.Paths{Root: root}}, n)
			if err != nil || ok != tt.wantOK {
				t.Fatalf("RemoveVIP = %v, %v; want %v", ok, err, tt.wantOK)
			}
			if got := len(n.deleted); (tt.deleted == "" && got != 0) || (tt.deleted != "" && (got != 1 || n.deleted[0] != tt.deleted)) {
				t.Errorf("deleted %v, want %q", n.deleted, tt.deleted)
			}
		})
	}
}
