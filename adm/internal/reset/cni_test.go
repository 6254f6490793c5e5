package reset

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// natListing is a node's nat table after pods with hostPorts ran, as
// iptables -S lists it: the CNI plugins' chains among the proxy's.
const natListing = `-P PREROUTING ACCEPT
-P POSTROUTING ACCEPT
-N CNI-0123456789abcdef01234567
-N CNI-DN-0123456789abcdef01234
-N CNI-HOSTPORT-DNAT
-N CNI-HOSTPORT-MASQ
-N CNI-HOSTPORT-SETMARK
-N KUBE-SERVICES
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT
-A POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ
-A POSTROUTING -s 10.88.0.5/32 -m comment --comment "name: \"trireme\" id: \"abc\"" -j CNI-0123456789abcdef01234567
-A CNI-0123456789abcdef01234567 -d 10.88.0.0/16 -j ACCEPT
-A CNI-DN-0123456789abcdef01234 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.88.0.5:80
-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \"trireme\" id: \"abc\"" -j CNI-DN-0123456789abcdef01234
-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE
`

func TestCleanupCNIChains(t *testing.T) {
	tests := []struct {
		name    string
		cmds    fakeCommands
		script  string // what iptables-restore is given, "" for no run
		wantErr bool
	}{
		{
			name: "portmap's and bridge's chains",
			cmds: fakeCommands{tools: []string{"iptables"}, outputs: map[string]string{"iptables -w -t nat -S": natListing}},
			script: `*nat
-D PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT
-D POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ
-D POSTROUTING -s 10.88.0.5/32 -m comment --comment "name: \"trireme\" id: \"abc\"" -j CNI-0123456789abcdef01234567
-F CNI-0123456789abcdef01234567
-F CNI-DN-0123456789abcdef01234
-F CNI-HOSTPORT-DNAT
-F CNI-HOSTPORT-MASQ
-F CNI-HOSTPORT-SETMARK
-X CNI-0123456789abcdef01234567
-X CNI-DN-0123456789abcdef01234
-X CNI-HOSTPORT-DNAT
-X CNI-HOSTPORT-MASQ
-X CNI-HOSTPORT-SETMARK
COMMIT
`,
		},
		{
			name: "no CNI chains",
			cmds: fakeCommands{tools: []string{"iptables", "ip6tables"}, outputs: map[string]string{
				"iptables -w -t nat -S":  "-P PREROUTING ACCEPT\n-N KUBE-SERVICES\n-N CNI-FORWARD-LIKE\n",
				"ip6tables -w -t nat -S": "-P PREROUTING ACCEPT\n",
			}},
		},
		{
			name: "iptables-restore refuses",
			cmds: fakeCommands{tools: []string{"iptables"}, outputs: map[string]string{"iptables -w -t nat -S": natListing},
				failing: []string{"iptables-restore -w --noflush"}},
			script:  "*nat\n",
			wantErr: true,
		},
		{name: "no iptables"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := cleanupCNIChains(context.Background(), &tt.cmds, func(string, ...any) {})
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			switch {
			case tt.script == "" && len(tt.cmds.inputs) > 0:
				t.Errorf("iptables-restore ran with\n%s", tt.cmds.inputs[0])
			case tt.script != "" && len(tt.cmds.inputs) != 1:
				t.Errorf("iptables-restore ran %d times, want once", len(tt.cmds.inputs))
			case tt.script != "" && !strings.HasPrefix(tt.cmds.inputs[0], tt.script):
				t.Errorf("iptables-restore given\n%s\nwant\n%s", tt.cmds.inputs[0], tt.script)
			}
		})
	}
}

// TestCleanupCNIChainsReal removes the chains from a real nat table, in a
// network namespace of the test's own, and leaves the others' alone.
func TestCleanupCNIChainsReal(t *testing.T) {
	if testing.Short() || os.Getuid() != 0 {
		t.Skip("needs root: iptables in a network namespace of its own")
	}
	if _, err := exec.LookPath("iptables-restore"); err != nil {
		t.Skip("no iptables")
	}
	done := make(chan string)
	go func() {
		// The thread stays in the new namespace and ends with the
		// goroutine; the commands it starts run in that namespace.
		runtime.LockOSThread()
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			done <- "unshare: " + err.Error()
			return
		}
		ctx := context.Background()
		// natListing as a restore script: its chains and rules, not the
		// built-in chains' policies.
		setup := "*nat\n"
		for _, l := range strings.Split(natListing, "\n") {
			if l != "" && !strings.HasPrefix(l, "-P ") {
				setup += l + "\n"
			}
		}
		if out, err := (execCommands{}).RunInput(ctx, []byte(setup+"COMMIT\n"), "iptables-restore", "-w"); err != nil {
			done <- "set up the chains: " + err.Error() + ": " + string(out)
			return
		}
		var reported []string
		if err := CleanupCNIChains(ctx, func(f string, a ...any) { reported = append(reported, f) }); err != nil || len(reported) == 0 {
			done <- fmt.Sprintf("clean up: reported %q: %v", reported, err)
			return
		}
		out, err := (execCommands{}).Run(ctx, "iptables", "-w", "-t", "nat", "-S")
		if err != nil {
			done <- "list: " + err.Error()
			return
		}
		done <- string(out)
	}()
	got := <-done
	if strings.Contains(got, "CNI-") || !strings.Contains(got, "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES") {
		t.Fatalf("after the clean-up the nat table is\n%s\nwant the proxy's chain alone", got)
	}
}
