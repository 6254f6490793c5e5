// Package netnsnode makes Kubernetes worker nodes of network namespaces on
// one machine, as kind makes them of containers: each node has its own network
// namespace, address and root directory (containerd's root, state and socket,
// the kubelet's directory, CNI state, pod logs), and joins with the command
// `triremeadm init` printed. The e2e suite and `make up WORKERS=N` both use it.
package netnsnode

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Switch is the network the nodes join, as machines join a network through
// their NICs: a bridge in a network namespace of its own, and a veth pair
// whose host end (HostIface) holds the host's address on it.
//
// Both choices follow from measurements. With the address on the bridge
// device itself, the kernel segments the VXLAN packets the host sends out of
// it (a bridge device offers no segmentation of encapsulated packets), and
// the overlay cost the host node three times what it costs on a NIC or a
// veth: 37-52 % of the nodes' own throughput against 86-97 %. With the bridge
// in the host's namespace, the host's bridge netfilter would see the nodes'
// packets, and a pod's masqueraded connection to another node would clash
// with itself in the host's conntrack table and be dropped; a switch is
// another machine.
type Switch struct {
	// Netns is the switch's network namespace, Bridge its bridge there.
	Netns, Bridge string
	// HostIface is the host's end of its veth pair, HostPort the other end,
	// the host's port on Bridge.
	HostIface, HostPort string
	// HostAddr is the host's address on HostIface and the network's prefix;
	// the nodes' default gateway.
	HostAddr netip.Prefix
	// MTU of every link on the switch; 0 leaves the kernel's default.
	MTU int
}

// Create makes the switch and the host's veth pair.
func (s *Switch) Create() error {
	cmds := [][]string{
		{"ip", "netns", "add", s.Netns},
		{"ip", "-n", s.Netns, "link", "add", s.Bridge, "type", "bridge"},
		{"ip", "-n", s.Netns, "link", "set", s.Bridge, "up"},
		{"ip", "link", "add", s.HostIface, "type", "veth", "peer", "name", s.HostPort, "netns", s.Netns},
		{"ip", "-n", s.Netns, "link", "set", s.HostPort, "master", s.Bridge, "up"},
		{"ip", "addr", "add", s.HostAddr.String(), "dev", s.HostIface},
		{"ip", "link", "set", s.HostIface, "up"},
	}
	if s.MTU > 0 {
		mtu := strconv.Itoa(s.MTU)
		cmds = append(cmds,
			[]string{"ip", "-n", s.Netns, "link", "set", s.Bridge, "mtu", mtu},
			[]string{"ip", "-n", s.Netns, "link", "set", s.HostPort, "mtu", mtu},
			[]string{"ip", "link", "set", s.HostIface, "mtu", mtu})
	}
	return run(cmds...)
}

// Delete removes the host's veth pair (deleting one end deletes both) and
// the switch, if they are there.
func (s *Switch) Delete() {
	_ = exec.Command("ip", "link", "delete", s.HostIface).Run()
	_ = exec.Command("ip", "netns", "delete", s.Netns).Run()
}

// Node is a worker node: a network namespace with its own address on a
// Switch, its own root directory, its processes started through nsenter
// --net so that they share this machine's mount namespace (the kubelet's
// volume mounts must be visible to containerd).
type Node struct {
	// Name is the node's name, Netns its network namespace.
	Name, Netns string
	// Port is the switch's end of the node's veth pair; the node's end is
	// its eth0.
	Port string
	// IP is the node's address on the switch.
	IP netip.Addr
	// Root is the node's --root-dir.
	Root string
	// Switch is the network the node joins.
	Switch *Switch
	// Adm is the triremeadm binary.
	Adm string
	// Images are the image archives (docker-archives) Create imports into the
	// node's containerd, as a machine with its images pulled.
	Images []string
}

// Command runs a command in the node's network namespace only.
func (n *Node) Command(args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=/var/run/netns/" + n.Netns, "--"}, args...)...)
}

// Socket is the node's containerd socket.
func (n *Node) Socket() string { return filepath.Join(n.Root, "run/containerd/containerd.sock") }

// Log is the path of one of the node's logs (kubelet, containerd).
func (n *Node) Log(name string) string {
	return filepath.Join(n.Root, "var/log/trireme", name+".log")
}

// Attach makes network namespace netns a machine on the switch: its eth0
// at ip, the other end of the veth pair, port, on the bridge, and the host
// its default gateway. Deleting netns removes both.
func (s *Switch) Attach(netns, port string, ip netip.Addr) error {
	cmds := [][]string{
		{"ip", "netns", "add", netns},
		{"ip", "-n", s.Netns, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", netns},
		{"ip", "-n", s.Netns, "link", "set", port, "master", s.Bridge, "up"},
		{"ip", "-n", netns, "addr", "add", netip.PrefixFrom(ip, s.HostAddr.Bits()).String(), "dev", "eth0"},
		{"ip", "-n", netns, "link", "set", "eth0", "up"},
		{"ip", "-n", netns, "link", "set", "lo", "up"},
		// A machine's default gateway (the host), which ClusterIPs need from
		// a node itself: without a route the kernel refuses the connection
		// before the proxy's DNAT picks the real destination. The pod ranges
		// of other nodes are flannel's routes, more specific.
		{"ip", "-n", netns, "route", "add", "default", "via", s.HostAddr.Addr().String()},
	}
	if s.MTU > 0 {
		mtu := strconv.Itoa(s.MTU)
		cmds = append(cmds,
			[]string{"ip", "-n", s.Netns, "link", "set", port, "mtu", mtu},
			[]string{"ip", "-n", netns, "link", "set", "eth0", "mtu", mtu})
	}
	return run(cmds...)
}

// Create makes the node's network namespace and its port on the switch,
// starts its containerd and imports its images.
func (n *Node) Create() error {
	if err := n.Switch.Attach(n.Netns, n.Port, n.IP); err != nil {
		return err
	}
	if err := run([]string{"ip", "netns", "exec", n.Netns, "sysctl", "-qw", "net.ipv4.ip_forward=1"}); err != nil {
		return err
	}
	if err := os.MkdirAll(n.Root, 0o755); err != nil {
		return err
	}
	// The node's containerd first, to load the images (as a machine with its
	// images pulled); the join then reuses it.
	out, err := n.Command(n.Adm, "init", "phase", "container-runtime", "--root-dir", n.Root,
		"--apiserver-advertise-address", n.IP.String(), "--node-name", n.Name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("container-runtime of %s: %w\n%s", n.Name, err, out)
	}
	return n.Import(n.Images)
}

// Import imports image archives (docker-archives) into the node's
// containerd, as `triremeadm images import` does on a machine.
func (n *Node) Import(archives []string) error {
	if len(archives) == 0 {
		return nil
	}
	dir := filepath.Join(n.Root, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, img := range archives {
		if err := os.Symlink(img, filepath.Join(dir, filepath.Base(img))); err != nil {
			return err
		}
	}
	out, err := exec.Command(n.Adm, "images", "import", "--dir", dir, "--containerd-socket", n.Socket()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("images import on %s: %w\n%s", n.Name, err, out)
	}
	return nil
}

// Join runs joinCommand, the worker join command init printed, in the node's
// network namespace with the node's root, name and address, and config, a
// file with the node's KubeletConfiguration.
func (n *Node) Join(joinCommand, config string) error {
	f := strings.Fields(joinCommand)
	if len(f) < 3 || f[0] != "triremeadm" || f[1] != "join" {
		return fmt.Errorf("not a join command: %q", joinCommand)
	}
	args := append([]string{n.Adm}, f[1:]...)
	args = append(args, "--root-dir", n.Root, "--node-name", n.Name, "--node-ip", n.IP.String(), "--config", config)
	if out, err := n.Command(args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Exists says whether the node's network namespace is there.
func (n *Node) Exists() bool {
	_, err := os.Stat("/var/run/netns/" + n.Netns)
	return err == nil
}

// Reset runs `triremeadm reset -f` in the node, if its network namespace is
// there: its pods, kubelet, containerd, pod network and files go.
func (n *Node) Reset() error {
	if !n.Exists() {
		return nil
	}
	if out, err := n.Command(n.Adm, "reset", "-f", "--root-dir", n.Root).CombinedOutput(); err != nil {
		return fmt.Errorf("reset %s: %w\n%s", n.Name, err, out)
	}
	return nil
}

// Delete removes the node's network namespace and its port on the switch.
func (n *Node) Delete() {
	_ = exec.Command("ip", "netns", "delete", n.Netns).Run()
	_ = exec.Command("ip", "-n", n.Switch.Netns, "link", "delete", n.Port).Run()
}

// KubeletConfig is a node's KubeletConfiguration: base (documents of a
// triremeadm --config, or empty) with the node's pods' cgroups below
// cgroupRoot, so that no node's reset touches another's.
func KubeletConfig(base, cgroupRoot string) []byte {
	if base == "" {
		base = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	}
	return []byte(base + "cgroupRoot: " + cgroupRoot + "\n")
}

// JoinCommand finds the worker join command in init's output, joined into
// one line ("triremeadm join HOST:PORT --token T --discovery-token-ca-cert-hash H"),
// or "" when there is none.
func JoinCommand(initOutput string) string {
	var join string
	for _, l := range strings.Split(initOutput, "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "\\"))
		switch {
		case strings.HasPrefix(l, "triremeadm join "):
			join = l
		case join != "" && strings.HasPrefix(l, "--discovery-token-ca-cert-hash"):
			join += " " + l
		}
	}
	return join
}

// ControlPlaneJoinCommand finds the control-plane join command in the output
// of `init --upload-certs` and returns its arguments after "triremeadm"
// ("join", "HOST:PORT", "--token", ..., "--control-plane", "--certificate-key",
// KEY), or nil when there is none.
func ControlPlaneJoinCommand(initOutput string) []string {
	var cmd string
	for _, l := range strings.Split(initOutput, "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "\\"))
		switch {
		case strings.HasPrefix(l, "triremeadm join ") && cmd == "":
			cmd = l
		case cmd != "" && !strings.Contains(cmd, "--certificate-key") && strings.HasPrefix(l, "--"):
			cmd += " " + l
		}
	}
	if !strings.Contains(cmd, "--control-plane --certificate-key") {
		return nil
	}
	return strings.Fields(cmd)[1:]
}

// FlannelNodePaths is the addons chart's flannel.nodePaths value (JSON, for
// helm --set-json) that gives each node flannel's directories below its own
// root (CNI conf_dir, host-local's dataDir, flanneld's run directory): each
// gets a DaemonSet of its own, so no flannel pod writes into another node's
// directories on the file system the nodes share.
func FlannelNodePaths(nodes []*Node) (string, error) {
	paths := map[string]map[string]string{}
	for _, n := range nodes {
		paths[n.Name] = map[string]string{
			"cniConfDir": filepath.Join(n.Root, "etc/cni/net.d"),
			"cniDataDir": filepath.Join(n.Root, "var/lib/cni/networks/trireme"),
			"runDir":     filepath.Join(n.Root, "run/flannel"),
		}
	}
	js, err := json.Marshal(paths)
	if err != nil {
		return "", fmt.Errorf("flannel node paths: %w", err)
	}
	return "flannel.nodePaths=" + string(js), nil
}

func run(cmds ...[]string) error {
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(c, " "), err, out)
		}
	}
	return nil
}

// MountsBelow lists the mount points below dir, deepest first, so that
// unmounting them in order never meets a busy parent.
func MountsBelow(dir string) []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append([]string{f[4]}, out...)
		}
	}
	return out
}

// Process is a process of this machine, as /proc shows it.
type Process struct {
	PID int
	// Cmdline is its command line, arguments joined by spaces.
	Cmdline string
	// RSSKiB is its resident set size.
	RSSKiB int
}

// Processes lists this machine's processes (kernel threads, which have
// no command line, left out). The suites find a node's processes by the
// node's root directory in their command lines.
func Processes() []Process {
	entries, _ := os.ReadDir("/proc")
	var out []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		p := Process{PID: pid, Cmdline: strings.ReplaceAll(strings.TrimRight(string(raw), "\x00"), "\x00", " ")}
		if status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status")); err == nil {
			for _, l := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
					p.RSSKiB, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				}
			}
		}
		out = append(out, p)
	}
	return out
}
