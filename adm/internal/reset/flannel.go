package reset

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
)

// FlannelConflist is the CNI configuration the flannel addon writes into the
// node's CNI conf_dir, named to sort ahead of containerd's.
const FlannelConflist = "05-flannel.conflist"

// FlannelDevices are the interfaces flanneld's vxlan backend creates.
var FlannelDevices = []string{"flannel.1", "flannel-v6.1"}

// flannelChains are the iptables chains flanneld's --ip-masq and forward
// rules make, each with the built-in chain that jumps to it and the comment
// that marks the jump.
var flannelChains = []struct{ table, chain, from, comment string }{
	{"nat", "FLANNEL-POSTRTG", "POSTROUTING", "flanneld masq"},
	{"filter", "FLANNEL-FWD", "FORWARD", "flanneld forward"},
}

// flannelTables are the nftables tables flanneld makes when its network
// configuration says EnableNFTables.
var flannelTables = [][2]string{{"ip", "flannel-ipv4"}, {"ip6", "flannel-ipv6"}}

// commands runs the tools the clean-up uses; tests substitute it.
type commands interface {
	// Has reports whether the tool name is installed.
	Has(name string) bool
	// Run runs name with args and returns its combined output.
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
	// RunInput is Run with input on the command's standard input.
	RunInput(ctx context.Context, input []byte, name string, args ...string) ([]byte, error)
}

type execCommands struct{}

func (execCommands) Has(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

func (execCommands) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

func (execCommands) RunInput(ctx context.Context, input []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(input)
	return cmd.CombinedOutput()
}

// CleanupFlannel removes what the flannel addon made in this node's network
// namespace: its devices (and the routes through them), the host-gw routes
// into the pod network that its subnet file names, and its iptables chains and
// nftables tables. It reports each removal through report. A machine without
// flannel, iptables or nft is not an error.
func CleanupFlannel(ctx context.Context, subnetFile string, report func(format string, args ...any)) error {
	return cleanupFlannel(ctx, execCommands{}, subnetFile, report)
}

func cleanupFlannel(ctx context.Context, cmds commands, subnetFile string, report func(format string, args ...any)) error {
	var errs []error
	for _, dev := range FlannelDevices {
		if ok, err := DeleteLink(dev); err != nil {
			errs = append(errs, err)
		} else if ok {
			report("deleted flannel's device %s", dev)
		}
	}
	networks, err := flannelNetworks(subnetFile)
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range networks {
		// host-gw routes each other node's range through that node's address;
		// "flush root" removes every route into the pod network.
		family := "-4"
		if n.Addr().Is6() {
			family = "-6"
		}
		if out, err := cmds.Run(ctx, "ip", family, "route", "flush", "root", n.String()); err != nil {
			errs = append(errs, fmt.Errorf("ip route flush root %s: %w: %s", n, err, strings.TrimSpace(string(out))))
		} else {
			report("removed the routes into the pod network %s", n)
		}
	}
	for _, bin := range []string{"iptables", "ip6tables"} {
		if !cmds.Has(bin) {
			continue
		}
		for _, c := range flannelChains {
			if _, err := cmds.Run(ctx, bin, "-w", "-t", c.table, "-S", c.chain); err != nil {
				continue // no such chain
			}
			jump := []string{"-w", "-t", c.table, "-D", c.from, "-m", "comment", "--comment", c.comment, "-j", c.chain}
			// flanneld re-adds a jump it finds missing; there may be more than one.
			for range 10 {
				if _, err := cmds.Run(ctx, bin, jump...); err != nil {
					break
				}
			}
			for _, op := range []string{"-F", "-X"} {
				if out, err := cmds.Run(ctx, bin, "-w", "-t", c.table, op, c.chain); err != nil {
					errs = append(errs, fmt.Errorf("%s -t %s %s %s: %w: %s", bin, c.table, op, c.chain, err, strings.TrimSpace(string(out))))
				}
			}
			report("removed flannel's %s chain %s/%s", bin, c.table, c.chain)
		}
	}
	errs = append(errs, deleteTables(ctx, cmds, "flannel", flannelTables, report))
	return errors.Join(errs...)
}

// deleteTables removes those of tables (family, name) that exist, each
// reported as owner's. A machine without nft has none.
func deleteTables(ctx context.Context, cmds commands, owner string, tables [][2]string, report func(format string, args ...any)) error {
	if !cmds.Has("nft") {
		return nil
	}
	var errs []error
	for _, t := range tables {
		if _, err := cmds.Run(ctx, "nft", "list", "table", t[0], t[1]); err != nil {
			continue // no such table
		}
		if out, err := cmds.Run(ctx, "nft", "delete", "table", t[0], t[1]); err != nil {
			errs = append(errs, fmt.Errorf("nft delete table %s %s: %w: %s", t[0], t[1], err, strings.TrimSpace(string(out))))
		} else {
			report("removed %s's nftables table %s %s", owner, t[0], t[1])
		}
	}
	return errors.Join(errs...)
}

// flannelNetworks reads the pod networks (FLANNEL_NETWORK,
// FLANNEL_IPV6_NETWORK) from flanneld's subnet file; none if there is no file.
func flannelNetworks(path string) ([]netip.Prefix, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []netip.Prefix
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if k != "FLANNEL_NETWORK" && k != "FLANNEL_IPV6_NETWORK" {
			continue
		}
		p, err := netip.ParsePrefix(strings.Trim(v, `"'`))
		if err != nil {
			return out, fmt.Errorf("%s: %s: %w", path, k, err)
		}
		out = append(out, p.Masked())
	}
	return out, sc.Err()
}
