package preflight

import (
	"errors"
	"fmt"
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
	// freePct is the free space, in percent of 1000 MiB, of the filesystem
	// of each existing path; paths missing here are on "/".
	freePct map[string]uint64
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
		Statfs: func(p string) (uint64, uint64, error) {
			pct, ok := f.freePct[p]
			if !ok {
				pct = f.freePct["/"]
			}
			return pct * 10 << 20, 1000 << 20, nil
		},
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
		busy: map[int]bool{}, dirs: map[string]int{}, freePct: map[string]uint64{"/": 50},
		modules: map[string]map[string]string{"br_netfilter": {"/proc/sys/net/bridge/bridge-nf-call-iptables": "1\n"}},
	}
}

func TestChecks(t *testing.T) {
	in := Inputs{Ports: []int{6443, 2379}, EmptyDirs: []string{"/r/etc/trireme/manifests"}, CNIBinDir: "/usr/lib/cni", Root: "/r",
		KubeletDir: "/r/var/lib/trireme/kubelet", ContainerdRoot: "/r/var/lib/containerd",
		EvictionHard: map[string]string{"nodefs.available": "10%", "imagefs.available": "15%", "memory.available": "100Mi"}}
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
		{name: "disk nearly full", mutate: func(h *fakeHost) { h.freePct["/"] = 6 },
			wantErrors: []string{"[ERROR DiskSpace]: 60 MiB (6%) free on the filesystem of /r/var/lib/trireme/kubelet", "below 10% (nodefs.available)", "below 15% (imagefs.available)"}},
		{name: "image filesystem apart and low", mutate: func(h *fakeHost) {
			h.files["/r/var/lib/containerd"] = ""
			h.freePct["/r/var/lib/containerd"] = 12
		}, wantErrors: []string{"[ERROR DiskSpace]: 120 MiB (12%) free on the filesystem of /r/var/lib/containerd"}},
		{name: "disk low warns", mutate: func(h *fakeHost) { h.freePct["/"] = 18 }, wantWarns: []string{"[WARNING DiskSpace]: 180 MiB (18%) free", "imagefs.available"}},
		{name: "disk full ignored", mutate: func(h *fakeHost) { h.freePct["/"] = 2 }, ignore: []string{"DiskSpace"}, wantWarns: []string{"[WARNING DiskSpace]", "(ignored)"}},
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

func TestDiskSpaceThresholds(t *testing.T) {
	tests := []struct {
		name     string
		evict    map[string]string
		freePct  uint64
		wantErr  string
		wantWarn string
	}{
		{name: "lowered thresholds pass a fuller disk", evict: map[string]string{"nodefs.available": "1%", "imagefs.available": "1%"}, freePct: 6},
		{name: "absolute threshold", evict: map[string]string{"nodefs.available": "1Gi"}, freePct: 90, wantErr: "900 MiB (90%) free on the filesystem of /k: the kubelet evicts pods and taints the node with DiskPressure below 1Gi (nodefs.available)"},
		{name: "near an absolute threshold", evict: map[string]string{"imagefs.available": "100Mi"}, freePct: 12, wantWarn: "below 100Mi (imagefs.available)"},
		{name: "no disk thresholds", evict: map[string]string{"memory.available": "100Mi"}, freePct: 1},
		{name: "bad threshold", evict: map[string]string{"nodefs.available": "ten"}, freePct: 50, wantErr: "evictionHard[nodefs.available]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := goodHost()
			h.freePct["/"] = tt.freePct
			warns, errs := diskSpace(h.host(), tt.evict, "/k", "/c")
			if got := fmt.Sprint(errs); (tt.wantErr == "") != (len(errs) == 0) || !strings.Contains(got, tt.wantErr) {
				t.Errorf("errors %v, want %q", errs, tt.wantErr)
			}
			if got := strings.Join(warns, "\n"); (tt.wantWarn == "") != (len(warns) == 0) || !strings.Contains(got, tt.wantWarn) {
				t.Errorf("warnings %q, want %q", warns, tt.wantWarn)
			}
		})
	}
}
