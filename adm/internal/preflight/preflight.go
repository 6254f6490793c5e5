// Package preflight checks that a machine can run a Trireme node before triremeadm
// changes anything: root, the kernel settings pods need, free ports, the container
// runtime and CNI binaries, free disk space, swap and the cgroup version. A failed
// check is an error
// or a warning; errors stop init unless their check is named in
// --ignore-preflight-errors (or "all"), which turns them into warnings.
package preflight

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	kubeletconfig "trireme.dev/api/config/kubelet"
)

// Check is one named check. Run returns warnings, which never stop init, and errors,
// which do unless the check is ignored.
type Check struct {
	// Name is what --ignore-preflight-errors takes, e.g. "Port-6443" or "Swap".
	Name string
	Run  func() (warnings []string, errs []error)
}

// Host is how the checks see the machine; tests replace parts of it.
type Host struct {
	ReadFile   func(string) ([]byte, error)
	LookPath   func(string) (string, error)
	Stat       func(string) (os.FileInfo, error)
	ReadDir    func(string) ([]os.DirEntry, error)
	Listen     func(port int) error
	EUID       func() int
	LoadModule func(name string) error
	// Statfs returns the bytes available to unprivileged users and the size
	// of the filesystem holding path.
	Statfs func(path string) (avail, size uint64, err error)
}

// RealHost is the machine triremeadm runs on.
func RealHost() Host {
	return Host{
		ReadFile: os.ReadFile, LookPath: exec.LookPath, Stat: os.Stat, ReadDir: os.ReadDir, EUID: os.Geteuid,
		Listen: func(port int) error {
			l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
			if err != nil {
				return err
			}
			return l.Close()
		},
		LoadModule: func(name string) error {
			out, err := exec.Command("modprobe", name).CombinedOutput()
			if err != nil {
				return fmt.Errorf("modprobe %s: %w: %s", name, err, strings.TrimSpace(string(out)))
			}
			return nil
		},
		Statfs: func(path string) (uint64, uint64, error) {
			var st syscall.Statfs_t
			if err := syscall.Statfs(path, &st); err != nil {
				return 0, 0, err
			}
			return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
		},
	}
}

// Inputs is what the checks depend on.
type Inputs struct {
	// Ports must be free.
	Ports []int
	// EmptyDirs must be missing or empty (manifests, etcd data).
	EmptyDirs []string
	// CNIBinDir must hold the CNI plugins.
	CNIBinDir string
	// KubeletDir and ContainerdRoot are where the kubelet measures its node
	// and image filesystems for DiskPressure; they need not exist yet.
	KubeletDir, ContainerdRoot string
	// EvictionHard is the kubelet's evictionHard: below nodefs.available or
	// imagefs.available the node is tainted DiskPressure at once, and no pod
	// without a toleration for it (CoreDNS included) is ever scheduled, so
	// init would end in a cluster that cannot run anything.
	EvictionHard map[string]string
	// Root is stripped from paths in check names (--root-dir in tests).
	Root string
}

// CNIPlugins are the CNI binaries the container runtime's network needs.
var CNIPlugins = []string{"bridge", "host-local", "portmap", "loopback"}

// Checks lists the control-plane node's checks in order.
func Checks(h Host, in Inputs) []Check {
	checks := []Check{
		{Name: "IsPrivilegedUser", Run: func() ([]string, []error) {
			if h.EUID() != 0 {
				return nil, []error{errors.New("triremeadm must run as root")}
			}
			return nil, nil
		}},
		sysctl(h, "net/ipv4/ip_forward", ""),
		sysctl(h, "net/bridge/bridge-nf-call-iptables", "br_netfilter"),
	}
	for _, p := range in.Ports {
		checks = append(checks, Check{Name: "Port-" + strconv.Itoa(p), Run: func() ([]string, []error) {
			if err := h.Listen(p); err != nil {
				return nil, []error{fmt.Errorf("port %d is in use: %w", p, err)}
			}
			return nil, nil
		}})
	}
	for _, d := range in.EmptyDirs {
		name := strings.TrimPrefix(d, strings.TrimSuffix(in.Root, "/"))
		checks = append(checks, Check{Name: "DirAvailable-" + strings.ReplaceAll(name, "/", "-"), Run: func() ([]string, []error) {
			entries, err := h.ReadDir(d)
			if err == nil && len(entries) > 0 {
				return nil, []error{fmt.Errorf("%s is not empty (run triremeadm reset first)", d)}
			}
			return nil, nil
		}})
	}
	for _, b := range []string{"containerd", "runc", "ctr"} {
		checks = append(checks, Check{Name: "FileExisting-" + b, Run: func() ([]string, []error) {
			if _, err := h.LookPath(b); err != nil {
				return nil, []error{fmt.Errorf("%s not found in PATH (apt-get install -y containerd runc)", b)}
			}
			return nil, nil
		}})
	}
	for _, b := range []string{"iptables", "nft", "conntrack", "ip"} {
		checks = append(checks, Check{Name: "FileExisting-" + b, Run: func() ([]string, []error) {
			if _, err := h.LookPath(b); err != nil {
				return []string{fmt.Sprintf("%s not found in PATH; the proxy and CNI plugins need it", b)}, nil
			}
			return nil, nil
		}})
	}
	for _, p := range CNIPlugins {
		checks = append(checks, Check{Name: "FileExisting-cni-" + p, Run: func() ([]string, []error) {
			path := filepath.Join(in.CNIBinDir, p)
			if _, err := h.Stat(path); err != nil {
				return nil, []error{fmt.Errorf("CNI plugin %s missing (apt-get install -y containernetworking-plugins)", path)}
			}
			return nil, nil
		}})
	}
	if in.KubeletDir != "" {
		checks = append(checks, Check{Name: "DiskSpace", Run: func() ([]string, []error) {
			return diskSpace(h, in.EvictionHard, in.KubeletDir, in.ContainerdRoot)
		}})
	}
	checks = append(checks,
		Check{Name: "Swap", Run: func() ([]string, []error) {
			data, err := h.ReadFile("/proc/swaps")
			if err != nil {
				return []string{fmt.Sprintf("cannot read /proc/swaps: %v", err)}, nil
			}
			if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) > 1 {
				return []string{"swap is on; the kubelet runs with failSwapOn: false and does not account for swap"}, nil
			}
			return nil, nil
		}},
		Check{Name: "SystemVerification", Run: func() ([]string, []error) {
			if _, err := h.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
				return nil, nil
			}
			return []string{"cgroups v1 (deprecated upstream): the kubelet runs with failCgroupV1: false"}, nil
		}},
	)
	return checks
}

// diskSpace checks the free space of the filesystems holding the kubelet's
// directory and containerd's root against the kubelet's eviction thresholds,
// and warns when less than 5% of the filesystem above them remains.
func diskSpace(h Host, evictionHard map[string]string, kubeletDir, containerdRoot string) ([]string, []error) {
	var warns []string
	var errs []error
	for _, f := range []struct{ signal, dir string }{{"nodefs.available", kubeletDir}, {"imagefs.available", containerdRoot}} {
		v, ok := evictionHard[f.signal]
		if !ok || f.dir == "" {
			continue
		}
		t, err := kubeletconfig.ParseThreshold(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("evictionHard[%s]: %w", f.signal, err))
			continue
		}
		dir := existingAncestor(h, f.dir)
		avail, size, err := h.Statfs(dir)
		if err != nil {
			warns = append(warns, fmt.Sprintf("cannot measure free space of %s: %v", dir, err))
			continue
		}
		if size == 0 {
			continue
		}
		need := uint64(t.Percent * float64(size) / 100)
		if t.Quantity != nil {
			need = uint64(t.Quantity.Value())
		}
		msg := fmt.Sprintf("%d MiB (%d%%) free on the filesystem of %s: the kubelet evicts pods and taints the node with DiskPressure below %s (%s)",
			avail>>20, avail*100/size, f.dir, v, f.signal)
		switch {
		case avail < need:
			errs = append(errs, errors.New(msg+"; free some space"))
		case avail < need+size/20:
			warns = append(warns, msg)
		}
	}
	return warns, errs
}

// existingAncestor returns dir or its nearest parent that exists.
func existingAncestor(h Host, dir string) string {
	for {
		if _, err := h.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

func sysctl(h Host, key, module string) Check {
	path := "/proc/sys/" + key
	return Check{Name: "FileContent-" + strings.ReplaceAll(path, "/", "-"), Run: func() ([]string, []error) {
		data, err := h.ReadFile(path)
		if err != nil && module != "" {
			if lerr := h.LoadModule(module); lerr != nil {
				return nil, []error{fmt.Errorf("%s missing and loading %s failed: %w", path, module, lerr)}
			}
			data, err = h.ReadFile(path)
		}
		if err != nil {
			return nil, []error{fmt.Errorf("%s: %w", path, err)}
		}
		if strings.TrimSpace(string(data)) != "1" {
			return nil, []error{fmt.Errorf("%s contents are not set to 1 (sysctl -w %s=1)", path, strings.ReplaceAll(key, "/", "."))}
		}
		return nil, nil
	}}
}

// Result is the outcome of running the checks.
type Result struct {
	// Warnings are printed, ignored errors among them.
	Warnings []string
	// Errors stop init.
	Errors []string
}

// Run runs checks, turning the errors of ignored checks into warnings.
func Run(checks []Check, ignore []string) Result {
	all := slices.ContainsFunc(ignore, func(s string) bool { return strings.EqualFold(s, "all") })
	var r Result
	for _, c := range checks {
		warns, errs := c.Run()
		for _, w := range warns {
			r.Warnings = append(r.Warnings, fmt.Sprintf("[WARNING %s]: %s", c.Name, w))
		}
		ignored := all || slices.ContainsFunc(ignore, func(s string) bool { return strings.EqualFold(s, c.Name) })
		for _, e := range errs {
			if ignored {
				r.Warnings = append(r.Warnings, fmt.Sprintf("[WARNING %s]: %v (ignored)", c.Name, e))
			} else {
				r.Errors = append(r.Errors, fmt.Sprintf("[ERROR %s]: %v", c.Name, e))
			}
		}
	}
	return r
}

// Err returns the errors as one error, or nil.
func (r Result) Err() error {
	if len(r.Errors) == 0 {
		return nil
	}
	return fmt.Errorf("preflight checks failed:\n\t%s\n(to ignore a check, name it in --ignore-preflight-errors=...)", strings.Join(r.Errors, "\n\t"))
}
