// Package system reads what the kubelet needs to know about its machine:
// cgroup version, capacity, kernel and OS, and whether the process may
// lower OOM scores or raise rlimits (these machines refuse both).
package system

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CgroupVersion is 1 or 2.
type CgroupVersion int

// DetectCgroupVersion reports 2 when /sys/fs/cgroup is a cgroup2 mount,
// 1 otherwise (a v1 hierarchy, possibly with v2 beside it at unified).
func DetectCgroupVersion() CgroupVersion {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return 2
	}
	return 1
}

// SetOOMScoreAdj writes score to /proc/self/oom_score_adj.
func SetOOMScoreAdj(score int) error {
	return os.WriteFile("/proc/self/oom_score_adj", []byte(strconv.Itoa(score)), 0)
}

// CanLowerOOMScoreAdj reports whether this machine lets a process lower
// its OOM score: it starts a child (so the kubelet's own score is left
// alone) that tries to lower its score below the one it inherits.
func CanLowerOOMScoreAdj() bool {
	cmd := exec.Command("/bin/sh", "-c", `cur=$(cat /proc/self/oom_score_adj); want=$((cur - 1)); [ "$want" -lt -1000 ] && exit 0; echo "$want" > /proc/self/oom_score_adj`)
	return cmd.Run() == nil
}

// RaiseOpenFilesLimit raises RLIMIT_NOFILE to n.
func RaiseOpenFilesLimit(n uint64) error {
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: n, Max: n})
}

// MachineInfo is the capacity and identity of the machine.
type MachineInfo struct {
	CPUs           int
	MemoryBytes    int64
	HugePages2Mi   int64
	HugePages1Gi   int64
	KernelVersion  string
	OSImage        string
	Architecture   string
	OperatingSytem string
	MachineID      string
	SystemUUID     string
	BootID         string
}

// ReadMachineInfo reads /proc, /sys and /etc for the machine's facts.
func ReadMachineInfo() (MachineInfo, error) {
	mi := MachineInfo{CPUs: runtime.NumCPU(), Architecture: runtime.GOARCH, OperatingSytem: runtime.GOOS}
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return mi, fmt.Errorf("read meminfo: %w", err)
	}
	mem := ParseMeminfo(meminfo)
	mi.MemoryBytes = mem["MemTotal"]
	size := mem["Hugepagesize"]
	switch size {
	case 2 << 20:
		mi.HugePages2Mi = mem["HugePages_Total"] * size
	case 1 << 30:
		mi.HugePages1Gi = mem["HugePages_Total"] * size
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err == nil {
		mi.KernelVersion = unix.ByteSliceToString(uts.Release[:])
	}
	mi.OSImage = osImage()
	mi.MachineID = readTrimmed("/etc/machine-id")
	mi.SystemUUID = strings.ToUpper(readTrimmed("/sys/class/dmi/id/product_uuid"))
	mi.BootID = readTrimmed("/proc/sys/kernel/random/boot_id")
	return mi, nil
}

// ParseMeminfo returns /proc/meminfo's fields in bytes (kB fields
// converted; counts such as HugePages_Total as they are).
func ParseMeminfo(data []byte) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		out[name] = v
	}
	return out
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func osImage() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return runtime.GOOS
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return runtime.GOOS
}

// FilesystemCapacity returns the size in bytes of the filesystem holding
// path.
func FilesystemCapacity(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return int64(st.Blocks) * st.Bsize, nil
}

// DefaultNodeIP returns the source address the kernel would use to reach
// the outside world: connecting a UDP socket sends no packet, it only
// routes.
func DefaultNodeIP() (net.IP, error) {
	conn, err := net.Dial("udp4", "198.51.100.1:9")
	if err == nil {
		defer conn.Close()
		if a, ok := conn.LocalAddr().(*net.UDPAddr); ok && !a.IP.IsLoopback() {
			return a.IP, nil
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("interface addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP, nil
		}
	}
	return nil, fmt.Errorf("no non-loopback IPv4 address; set --node-ip")
}
