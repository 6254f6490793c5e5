// Package tcprto caps the kernel's TCP retransmission timeout on nodes that
// run an etcd member, so that etcd's peers talk again within a second of a
// network partition healing.
//
// Why: etcd's peer streams are long-lived TCP connections, and the reader
// end sets no read deadline (rafthttp's timeout dialer is never used: its
// transport's DialContext takes precedence over the Dial it sets), so a
// member cut off from the others keeps its old streams. The writer end
// keeps retransmitting into them with the kernel's exponential backoff: after
// a 30 s partition the next try comes up to 26 s after the heal (up to
// 120 s after a longer one). Until it does, every raft message on that stream
// waits, so an etcd election that needs it stalls. Measured by e2e/faults
// ("etcd leader's node cut off from the others" after another node's cut):
// elections of 4-6 s and write gaps of 10-13 s, where 1-2 s is normal.
// net.ipv4.tcp_rto_max_ms (Linux 6.15 and later, per network namespace)
// bounds the backoff; 1 s makes such a stream resume within 1 s. It also
// ends a connection whose peer stays silent sooner: with tcp_retries2 at its
// default 15, after about 15 s instead of about 15 minutes, which an HA
// control plane wants anyway.
package tcprto

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Key is the sysctl, as a path below /proc/sys.
const Key = "net/ipv4/tcp_rto_max_ms"

// Name is the sysctl as sysctl(8) spells it.
const Name = "net.ipv4.tcp_rto_max_ms"

// Max is the value set: the smallest the kernel accepts, in milliseconds.
const Max = 1000

// KernelDefault is the kernel's own value (TCP_RTO_MAX, 120 s).
const KernelDefault = 120000

// ConfFile is the sysctl.d file that sets Max again at boot.
const ConfFile = "/etc/sysctl.d/90-trireme-tcp-rto.conf"

// Host is where the sysctl and the file are: /proc/sys and / on a machine;
// tests and --root-dir move them.
type Host struct {
	// ProcSys is the /proc/sys directory.
	ProcSys string
	// ConfFile is ConfFile's path.
	ConfFile string
}

// Result says what Cap did.
type Result int

const (
	// Capped means the sysctl is now Max.
	Capped Result = iota
	// Unsupported means the kernel has no such sysctl (before Linux 6.15).
	Unsupported
	// KeptAdmins means someone set another value than the kernel's
	// default; Cap leaves an administrator's choice alone.
	KeptAdmins
)

// Cap sets the sysctl to Max and writes ConfFile, unless the kernel lacks
// it or it holds a value an administrator chose (neither the kernel's
// default nor Max). It returns what it did and the value it found.
func (h Host) Cap() (Result, int, error) {
	path := filepath.Join(h.ProcSys, Key)
	current, err := readInt(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Unsupported, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if current != KernelDefault && current != Max {
		return KeptAdmins, current, nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(Max)), 0o644); err != nil {
		return 0, current, fmt.Errorf("set %s: %w", Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(h.ConfFile), 0o755); err != nil {
		return 0, current, err
	}
	conf := fmt.Sprintf("# Written by triremeadm (removed by triremeadm reset): etcd's peers resume\n# within 1 s after a network partition heals.\n%s = %d\n", Name, Max)
	if err := os.WriteFile(h.ConfFile, []byte(conf), 0o644); err != nil {
		return 0, current, fmt.Errorf("write %s: %w", h.ConfFile, err)
	}
	return Capped, current, nil
}

// Restore undoes Cap: when ConfFile exists it is removed and the sysctl set
// back to the kernel's default. It reports whether there was anything to undo.
func (h Host) Restore() (bool, error) {
	if err := os.Remove(h.ConfFile); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	path := filepath.Join(h.ProcSys, Key)
	if current, err := readInt(path); err != nil || current != Max {
		// Gone, or changed since: not this package's value any more.
		return true, nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(KernelDefault)), 0o644); err != nil {
		return true, fmt.Errorf("set %s back to %d: %w", Name, KernelDefault, err)
	}
	return true, nil
}

func readInt(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// ForRoot is the Host of a node whose files are below root (--root-dir;
// "" or "/" is the machine itself). The sysctl is always the running
// network namespace's own /proc/sys; under another root (tests) it is
// touched only when that namespace is a named one of `ip netns` (a node of
// the e2e suites), so a test on the host itself leaves the host's value
// alone. ok is false then.
func ForRoot(root string) (h Host, ok bool) {
	h = Host{ProcSys: "/proc/sys", ConfFile: filepath.Join(root, ConfFile)}
	if root == "" || root == "/" {
		return h, true
	}
	return h, inNamedNetns("/proc/self/ns/net", "/run/netns")
}

// inNamedNetns reports whether the network namespace self refers to is one
// of the namespaces bound in dir.
func inNamedNetns(self, dir string) bool {
	me, err := os.Stat(self)
	if err != nil {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && os.SameFile(me, fi) {
			return true
		}
	}
	return false
}

// Describe is a line for the user on what Cap did.
func Describe(r Result, found int, confFile string) string {
	switch r {
	case Capped:
		return fmt.Sprintf("%s = %d (was %d; %s keeps it): etcd's peers resume within 1 s after a network partition heals", Name, Max, found, confFile)
	case KeptAdmins:
		return fmt.Sprintf("%s = %d kept (set by an administrator); %d lets etcd's peers resume within 1 s after a network partition heals", Name, found, Max)
	default:
		return fmt.Sprintf("this kernel has no %s (Linux 6.15 and later): after a network partition heals, etcd's peers may stay unheard for up to TCP's retransmission backoff (tens of seconds)", Name)
	}
}
