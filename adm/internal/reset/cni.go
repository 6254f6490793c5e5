package reset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// bridgeChain is the name the CNI bridge plugin gives each pod's
// masquerade chain: CNI- and 24 hex digits of a hash of its network and
// container.
var bridgeChain = regexp.MustCompile(`^CNI-[0-9a-f]{24}$`)

// cniChain reports whether a chain of the nat table is one the CNI plugins
// containerd runs here make: the portmap plugin's shared chains
// (CNI-HOSTPORT-DNAT, -SETMARK, -MASQ), made at the first hostPort and
// never removed by the plugin, and the per-pod chains of portmap (CNI-DN-,
// CNI-SN-) and bridge, which a pod's teardown removes unless it failed.
func cniChain(name string) bool {
	for _, p := range []string{"CNI-HOSTPORT-", "CNI-DN-", "CNI-SN-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return bridgeChain.MatchString(name)
}

// CleanupCNIChains removes the CNI plugins' iptables chains from this
// node's network namespace, and the rules that jump to them, reporting the
// removal through report. Every pod is gone by then; the plugins make
// their chains again for the next one. A machine without iptables is not an
// error.
func CleanupCNIChains(ctx context.Context, report func(format string, args ...any)) error {
	return cleanupCNIChains(ctx, execCommands{}, report)
}

func cleanupCNIChains(ctx context.Context, cmds commands, report func(format string, args ...any)) error {
	var errs []error
	for _, bin := range []string{"iptables", "ip6tables"} {
		if !cmds.Has(bin) {
			continue
		}
		out, err := cmds.Run(ctx, bin, "-w", "-t", "nat", "-S")
		if err != nil {
			continue // no nat table in this family
		}
		script, chains := cniChainsRemoval(out)
		if len(chains) == 0 {
			continue
		}
		if out, err := cmds.RunInput(ctx, script, bin+"-restore", "-w", "--noflush"); err != nil {
			errs = append(errs, fmt.Errorf("%s-restore: remove the CNI plugins' chains %s: %w: %s", bin, strings.Join(chains, " "), err, strings.TrimSpace(string(out))))
			continue
		}
		report("removed the CNI plugins' %s chains %s", bin, strings.Join(chains, ", "))
	}
	return errors.Join(errs...)
}

// cniChainsRemoval reads a nat table listed by iptables -S and returns an
// iptables-restore script that deletes the jumps into the CNI plugins'
// chains from every other chain, then flushes and deletes those chains,
// with the chains' names.
func cniChainsRemoval(listing []byte) ([]byte, []string) {
	var chains []string
	var jumps []string
	for _, line := range strings.Split(string(listing), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "-N" && cniChain(f[1]):
			chains = append(chains, f[1])
		case len(f) > 3 && f[0] == "-A" && !cniChain(f[1]) && f[len(f)-2] == "-j" && cniChain(f[len(f)-1]):
			// iptables-restore reads the rule as -S wrote it, quotes and all.
			jumps = append(jumps, "-D"+strings.TrimPrefix(line, "-A"))
		}
	}
	if len(chains) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	b.WriteString("*nat\n")
	for _, j := range jumps {
		b.WriteString(j + "\n")
	}
	for _, c := range chains {
		fmt.Fprintf(&b, "-F %s\n", c)
	}
	for _, c := range chains {
		fmt.Fprintf(&b, "-X %s\n", c)
	}
	b.WriteString("COMMIT\n")
	return b.Bytes(), chains
}
