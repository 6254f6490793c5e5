// Package workernodes is trireme-nodes: it adds worker nodes of network
// namespaces (package netnsnode) to the cluster `make up` installed on this
// machine, and removes them again, as kind adds nodes of containers.
//
// The nodes join a switch of their own (a bridge in the network namespace
// trireme-nodes) through which the host, on its end of the veth pair
// trireme-nodes0 (10.213.9.1/24), is their default gateway: they reach the
// apiserver on the host's own address through it, and the host masquerades
// what they send beyond this machine. Each node's root is
// /var/lib/trireme-nodes/<name>.
package workernodes

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"trireme.dev/e2e/internal/netnsnode"
)

// The switch the nodes join and what the host adds for them.
var (
	hostNet = netip.MustParsePrefix("10.213.9.1/24")
	// ruleComment marks the host's iptables rules for the nodes.
	ruleComment = "trireme-nodes"
)

const (
	namePrefix = "trireme-worker"
	maxNodes   = 50
)

// Options say where the cluster's and the build's files are.
type Options struct {
	// StateDir holds the nodes' roots.
	StateDir string
	// Kubeconfig is the cluster's admin kubeconfig.
	Kubeconfig string
	// BinDir holds triremeadm and helm (`make build helm`).
	BinDir string
	// ImageDir holds the image archives every node imports (`make images`).
	ImageDir string
	// Chart is the addons chart the release is upgraded with.
	Chart string
	// InitOutput is a file with `triremeadm init`'s output, whose worker
	// join command the nodes run ("-": standard input).
	InitOutput string
}

const usage = `usage: trireme-nodes up N [flags]   add N worker nodes to make up's cluster
       trireme-nodes down [flags]   remove them (before triremeadm reset)`

// Run runs trireme-nodes with its arguments.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("trireme-nodes "+args[0], flag.ContinueOnError)
	o := Options{}
	fs.StringVar(&o.StateDir, "state-dir", "/var/lib/trireme-nodes", "directory of the nodes' roots")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "/etc/trireme/admin.conf", "the cluster's admin kubeconfig")
	fs.StringVar(&o.BinDir, "bin-dir", "_output/bin", "directory of triremeadm and helm")
	fs.StringVar(&o.ImageDir, "image-dir", "_output/images", "image archives every node imports")
	fs.StringVar(&o.Chart, "chart", "charts/trireme-addons", "the addons chart")
	fs.StringVar(&o.InitOutput, "init-output", "", "file with triremeadm init's output, whose join command the nodes run (- for standard input)")
	cmd, rest := args[0], args[1:]
	n := 0
	if cmd == "up" {
		if len(rest) == 0 {
			return errors.New(usage)
		}
		var err error
		if n, err = strconv.Atoi(rest[0]); err != nil || n < 1 || n > maxNodes {
			return fmt.Errorf("up: the number of nodes must be 1-%d, not %q", maxNodes, rest[0])
		}
		rest = rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(usage)
	}
	// The nodes' processes run the binaries by these paths from anywhere.
	for _, p := range []*string{&o.StateDir, &o.BinDir, &o.ImageDir, &o.Chart} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	switch cmd {
	case "up":
		if err := Up(ctx, o, n, stdin, stdout); err != nil {
			return fmt.Errorf("%w\n(trireme-nodes down removes what was made)", err)
		}
		return nil
	case "down":
		return Down(ctx, o, stdout)
	}
	return errors.New(usage)
}

func newSwitch(mtu int) *netnsnode.Switch {
	return &netnsnode.Switch{
		Netns:     "trireme-nodes",
		Bridge:    "br0",
		HostIface: "trireme-nodes0",
		HostPort:  "host",
		HostAddr:  hostNet,
		MTU:       mtu,
	}
}

// node is worker i (from 1).
func node(o Options, sw *netnsnode.Switch, i int) *netnsnode.Node {
	name := namePrefix + strconv.Itoa(i)
	ip := hostNet.Addr()
	for range i {
		ip = ip.Next()
	}
	return &netnsnode.Node{
		Name:   name,
		Netns:  name,
		Port:   "w" + strconv.Itoa(i),
		IP:     ip,
		Root:   filepath.Join(o.StateDir, name),
		Switch: sw,
		Adm:    filepath.Join(o.BinDir, "triremeadm"),
	}
}

// existing are the nodes with a root or a network namespace.
func existing(o Options) []*netnsnode.Node {
	sw := newSwitch(0)
	var nodes []*netnsnode.Node
	for i := 1; i <= maxNodes; i++ {
		n := node(o, sw, i)
		if _, err := os.Stat(n.Root); err == nil || n.Exists() {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// Up adds n worker nodes: the switch, the host's rules, each node's network
// namespace, containerd and images, flannel's paths for each node in the
// addons release, then each node's join, until it is Ready.
func Up(ctx context.Context, o Options, n int, stdin io.Reader, out io.Writer) error {
	if len(existing(o)) > 0 {
		return fmt.Errorf("worker nodes exist below %s: trireme-nodes down first", o.StateDir)
	}
	join, err := joinCommand(o.InitOutput, stdin)
	if err != nil {
		return err
	}
	for _, f := range []string{o.Kubeconfig, filepath.Join(o.BinDir, "triremeadm"), filepath.Join(o.BinDir, "helm")} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("up: %w (make up, make build helm)", err)
		}
	}
	images, err := filepath.Glob(filepath.Join(o.ImageDir, "*.tar"))
	if err != nil || len(images) == 0 {
		return fmt.Errorf("up: no image archives in %s (make images)", o.ImageDir)
	}
	// Every link at the MTU of the host's own network, so that every node's
	// pod network (flannel's VXLAN) has the host's.
	sw := newSwitch(defaultRouteMTU())
	step := func(what string, f func() error) error {
		start := time.Now()
		fmt.Fprintf(out, "trireme-nodes: %s ...", what)
		if err := f(); err != nil {
			fmt.Fprintln(out, " failed")
			return err
		}
		fmt.Fprintf(out, " ok (%s)\n", time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	if err := step("switch "+sw.Netns+", host "+sw.HostIface+" "+sw.HostAddr.String(), func() error {
		if err := sw.Create(); err != nil {
			return err
		}
		return hostRules(true)
	}); err != nil {
		return err
	}
	var nodes []*netnsnode.Node
	for i := 1; i <= n; i++ {
		nd := node(o, sw, i)
		nd.Images = images
		nodes = append(nodes, nd)
		if err := step(fmt.Sprintf("%s (%s): network namespace, containerd, %d images", nd.Name, nd.IP, len(images)), nd.Create); err != nil {
			return err
		}
	}
	// The host's flannel sends the nodes' VXLAN packets through trireme-nodes0:
	// the VXLAN device is bound to its interface, and the host's default
	// route's cannot reach the nodes.
	if err := step("flannel's paths below each node's root, the host's through trireme-nodes0 (helm upgrade trireme-addons)", func() error {
		value, err := netnsnode.FlannelNodePaths(nodes)
		if err != nil {
			return err
		}
		return command(ctx, filepath.Join(o.BinDir, "helm"), "--kubeconfig", o.Kubeconfig, "upgrade", "trireme-addons", o.Chart,
			"-n", "kube-system", "--reuse-values", "--timeout", "120s", "--set-json", value, "--set", "flannel.iface="+sw.HostIface)
	}); err != nil {
		return err
	}
	base, err := diskPolicy(hostKubeletConfig)
	if err != nil {
		return err
	}
	for _, nd := range nodes {
		if err := step(nd.Name+": triremeadm join, node Ready", func() error {
			config := filepath.Join(nd.Root, "kubelet-config.yaml")
			if err := os.WriteFile(config, netnsnode.KubeletConfig(base, "/"+nd.Name), 0o600); err != nil {
				return err
			}
			if err := nd.Join(join, config); err != nil {
				return err
			}
			return command(ctx, "kubectl", "--kubeconfig", o.Kubeconfig, "wait", "--for=condition=Ready", "node/"+nd.Name, "--timeout=120s")
		}); err != nil {
			return err
		}
	}
	// A node takes pods once its pod network is up (flannel clears
	// NetworkUnavailable, and with it the taint) and its DaemonSets run:
	// before that the scheduler would put every new pod on the host.
	return step("every node's pod network up and kube-system pods Ready", func() error {
		for _, nd := range nodes {
			if err := command(ctx, "kubectl", "--kubeconfig", o.Kubeconfig, "wait", "--for=condition=NetworkUnavailable=false", "node/"+nd.Name, "--timeout=120s"); err != nil {
				return err
			}
		}
		return command(ctx, "kubectl", "--kubeconfig", o.Kubeconfig, "-n", "kube-system", "wait", "--for=condition=Ready", "pods", "--all", "--timeout=120s")
	})
}

// Down removes every worker node: its reset (pods, kubelet, containerd, pod
// network, files), its Node object while the apiserver still answers, its
// network namespace and root; then the switch and the host's rules.
func Down(ctx context.Context, o Options, out io.Writer) error {
	var errs []error
	for _, n := range existing(o) {
		start := time.Now()
		if err := n.Reset(); err != nil {
			errs = append(errs, err)
		}
		if _, err := os.Stat(o.Kubeconfig); err == nil {
			_ = command(ctx, "kubectl", "--kubeconfig", o.Kubeconfig, "--request-timeout=5s", "delete", "node", n.Name, "--ignore-not-found", "--wait=false")
		}
		n.Delete()
		for _, m := range netnsnode.MountsBelow(n.Root) {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
		if err := os.RemoveAll(n.Root); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", n.Root, err))
		}
		fmt.Fprintf(out, "trireme-nodes: %s removed (%s)\n", n.Name, time.Since(start).Round(100*time.Millisecond))
	}
	newSwitch(0).Delete()
	if err := hostRules(false); err != nil {
		errs = append(errs, err)
	}
	if err := os.Remove(o.StateDir); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// hostRules adds (or deletes) the host's iptables rules for the nodes:
// forwarding to and from them whatever the FORWARD chain's policy (Docker's is
// DROP), and masquerading what they send beyond this machine (flannel
// masquerades their pods' to the node's address, which only the host routes).
func hostRules(add bool) error {
	rules := [][]string{
		{"-t", "filter", "FORWARD", "-i", "trireme-nodes0", "-j", "ACCEPT"},
		{"-t", "filter", "FORWARD", "-o", "trireme-nodes0", "-j", "ACCEPT"},
		{"-t", "nat", "POSTROUTING", "-s", hostNet.Masked().String(), "!", "-o", "trireme-nodes0", "-j", "MASQUERADE"},
	}
	for _, r := range rules {
		table, chain, spec := r[:2], r[2], append([]string{"-m", "comment", "--comment", ruleComment}, r[3:]...)
		exists := func() bool {
			return exec.Command("iptables", append(append(append([]string{}, table...), "-C", chain), spec...)...).Run() == nil
		}
		if add {
			if exists() {
				continue
			}
			if out, err := exec.Command("iptables", append(append(append([]string{}, table...), "-I", chain), spec...)...).CombinedOutput(); err != nil {
				return fmt.Errorf("iptables -I %s %v: %w: %s", chain, spec, err, out)
			}
			continue
		}
		for exists() {
			if out, err := exec.Command("iptables", append(append(append([]string{}, table...), "-D", chain), spec...)...).CombinedOutput(); err != nil {
				return fmt.Errorf("iptables -D %s %v: %w: %s", chain, spec, err, out)
			}
		}
	}
	return nil
}

// joinCommand reads init's output and finds its worker join command.
func joinCommand(file string, stdin io.Reader) (string, error) {
	if file == "" {
		return "", errors.New("up: --init-output (triremeadm init's output, with its join command) is required")
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return "", fmt.Errorf("up: read init's output: %w", err)
	}
	join := netnsnode.JoinCommand(string(data))
	if join == "" {
		return "", fmt.Errorf("up: no worker join command in %s", file)
	}
	return join, nil
}

// hostKubeletConfig is the configuration init wrote for the host's kubelet.
const hostKubeletConfig = "/var/lib/trireme/kubelet/config.yaml"

// diskPolicy returns a KubeletConfiguration holding the eviction and image
// garbage-collection settings of the kubelet configured in file: the nodes
// share the host's file system, so they must judge its free space as the
// host does (a host started with lower thresholds on a fuller disk would
// otherwise see its workers tainted with DiskPressure at once).
func diskPolicy(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("the host kubelet's configuration: %w", err)
	}
	var host kubeletv1beta1.KubeletConfiguration
	if err := yaml.Unmarshal(data, &host); err != nil {
		return "", fmt.Errorf("the host kubelet's configuration %s: %w", file, err)
	}
	// Only the fields set: a whole KubeletConfiguration would also carry
	// zero durations that override the kubelet's defaults.
	out := map[string]any{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
	for key, v := range map[string]any{
		"evictionHard": host.EvictionHard, "evictionSoft": host.EvictionSoft,
		"evictionSoftGracePeriod": host.EvictionSoftGracePeriod, "evictionMinimumReclaim": host.EvictionMinimumReclaim,
	} {
		if m := v.(map[string]string); len(m) > 0 {
			out[key] = m
		}
	}
	if p := host.ImageGCHighThresholdPercent; p != nil {
		out["imageGCHighThresholdPercent"] = *p
	}
	if p := host.ImageGCLowThresholdPercent; p != nil {
		out["imageGCLowThresholdPercent"] = *p
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode the nodes' disk policy: %w", err)
	}
	return string(b), nil
}

// defaultRouteMTU is the MTU of the host's default route's device, or 0.
func defaultRouteMTU() int {
	out, err := exec.Command("ip", "-4", "route", "show", "default").Output()
	if err != nil {
		return 0
	}
	f := strings.Fields(string(out))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			data, err := os.ReadFile(filepath.Join("/sys/class/net", f[i+1], "mtu"))
			if err != nil {
				return 0
			}
			mtu, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return mtu
		}
	}
	return 0
}

func command(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
