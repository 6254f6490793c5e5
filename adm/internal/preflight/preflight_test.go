package preflight

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// fakeHost is a machine described by maps.
type fakeHost struct {
	files   map[string]string
	bins    map[string]bool
	busy    map[int]bool
	dirs    map[string]int
	euid    int
	modules map[string]map[string]string // module -> files it creates
}

func (f *fakeHost) host() Host {
	return Host{
		ReadFile: func(p string) ([]byte, error) {
			if v, ok := f.files[p]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		},
		LookPath: func(b string) (string, error) {
			if f.bins[b] {
				return "/usr/bin/" + b, nil
			}
			return "", errors.New("not found")
		},
		Stat: func(p string) (os.FileInfo, error) {
			if _, ok := f.files[p]; ok {
				return nil, nil
			}
			return nil, fs.ErrNotExist
		},
		ReadDir: func(p string) ([]os.DirEntry, error) { return make([]os.DirEntry, f.dirs[p]), nil },
		Listen: func(port int) error {
			if f.busy[port] {
				return errors.New("address already in use")
			}
			return nil
		},
		EUID: func() int { return f.euid },
		LoadModule: func(m string) error {
			created, ok := f.modules[m]
			if !ok {
				return errors.New("module not found")
			}
			for k, v := range created {
				f.files[k] = v
			}
			return nil
		},
	}
}

func goodHost() *fakeHost {
	return &fakeHost{
		files: map[string]string{
			"/proc/sys/net/ipv4/ip_forward": "1\n", "/proc/swaps": "Filename Type Size Used Priority\n",
			"/sys/fs/cgroup/cgroup.controllers": "cpu memory",
			"/usr/lib/cni/bridge":               "", "/usr/lib/cni/host-local": "", "/usr/lib/cni/portmap": "", "/usr/lib/cni/loopback": "",
		},
		bins: map[string]bool{"containerd": true, "runc": true, "ctr": true, "iptables": true, "nft": true, "conntrack": true, "ip": true},
		busy: map[int]bool{}, dirs: map[string]int{},
		modules: map[string]map[string]string{"br_netfilter": {"/proc/sys/net/bridge/bridge-nf-call-iptables": "1\n"}},
	}
}

func TestChecks(t *testing.T) {
	in := Inputs{Ports: []int{6443, 2379}, EmptyDirs: []string{"/r/etc/trireme/manifests"}, CNIBinDir: "/usr/lib/cni", Root: "/r"}
	tests := []struct {
		name       string
		mutate     func(*fakeHost)
		ignore     []string
		wantErrors []string
		wantWarns  []string
	}{
		{name: "good host loads br_netfilter", mutate: func(*fakeHost) {}},
		{name: "not root", mutate: func(h *fakeHost) { h.euid = 1000 }, wantErrors: []string{"[ERROR IsPrivilegedUser]"}},
		{name: "ip_forward off", mutate: func(h *fakeHost) { h.files["/proc/sys/net/ipv4/ip_forward"] = "0" },
			wantErrors: []string{"[ERROR FileContent--proc-sys-net-ipv4-ip_forward]: /proc/sys/net/ipv4/ip_forward contents are not set to 1"}},
		{name: "no br_netfilter", mutate: func(h *fakeHost) { delete(h.modules, "br_netfilter") },
			wantErrors: []string{"[ERROR FileContent--proc-sys-net-bridge-bridge-nf-call-iptables]", "loading br_netfilter failed"}},
		{name: "port busy", mutate: func(h *fakeHost) { h.busy[6443] = true }, wantErrors: []string{"[ERROR Port-6443]: port 6443 is in use"}},
		{name: "port busy ignored", mutate: func(h *fakeHost) { h.busy[6443] = true }, ignore: []string{"port-6443"},
			wantWarns: []string{"[WARNING Port-6443]", "(ignored)"}},
		{name: "all ignored", mutate: func(h *fakeHost) { h.busy[2379] = true; h.euid = 1 }, ignore: []string{"all"}},
		{name: "manifests present", mutate: func(h *fakeHost) { h.dirs["/r/etc/trireme/manifests"] = 2 },
			wantErrors: []string{"[ERROR DirAvailable--etc-trireme-manifests]"}},
		{name: "no containerd", mutate: func(h *fakeHost) { delete(h.bins, "containerd") }, wantErrors: []string{"[ERROR FileExisting-containerd]"}},
		{name: "no portmap", mutate: func(h *fakeHost) { delete(h.files, "/usr/lib/cni/portmap") }, wantErrors: []string{"[ERROR FileExisting-cni-portmap]"}},
		{name: "no conntrack warns", mutate: func(h *fakeHost) { delete(h.bins, "conntrack") }, wantWarns: []string{"[WARNING FileExisting-conntrack]"}},
		{name: "swap warns", mutate: func(h *fakeHost) { h.files["/proc/swaps"] += "/swapfile file 1024 0 -2\n" }, wantWarns: []string{"[WARNING Swap]"}},
		{name: "cgroup v1 warns", mutate: func(h *fakeHost) { delete(h.files, "/sys/fs/cgroup/cgroup.controllers") }, wantWarns: []string{"failCgroupV1: false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := goodHost()
			tt.mutate(h)
			r := Run(Checks(h.host(), in), tt.ignore)
			errs, warns := strings.Join(r.Errors, "\n"), strings.Join(r.Warnings, "\n")
			if len(tt.wantErrors) == 0 && len(r.Errors) > 0 {
				t.Errorf("unexpected errors:\n%s", errs)
			}
			for _, w := range tt.wantErrors {
				if !strings.Contains(errs, w) {
					t.Errorf("errors lack %q:\n%s", w, errs)
				}
			}
			if len(tt.wantWarns) == 0 && len(r.Warnings) > 0 && tt.ignore == nil {
				t.Errorf("unexpected warnings:\n%s", warns)
			}
			for _, w := range tt.wantWarns {
				if !strings.Contains(warns, w) {
					t.Errorf("warnings lack %q:\n%s", w, warns)
				}
			}
			if (r.Err() == nil) != (len(tt.wantErrors) == 0) {
				t.Errorf("Err() = %v", r.Err())
			}
		})
	}
}
