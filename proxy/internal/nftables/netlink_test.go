package nftables

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/knftables"

	"trireme.dev/componentbase/nftbatch"
	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
	"trireme.dev/proxy/internal/model/modeltest"
)

// inNetns runs fn on a thread inside a new network namespace, so that
// netlink sockets and the nft processes it starts program only that
// namespace, and returns the namespace's name (deleted at cleanup).
func inNetns(t *testing.T, fn func()) string {
	t.Helper()
	name := fmt.Sprintf("tpx3-nl-%d-%d", os.Getpid(), len(t.Name())+int(nsCounter.Add(1)))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		f, err := os.Open("/var/run/netns/" + name)
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
		}
		if err == nil {
			fn()
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return name
}

func listTable(t *testing.T, ns string, fam knftables.Family) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "table", string(fam), DefaultTable).CombinedOutput()
	if err != nil {
		t.Fatalf("nft list: %v: %s", err, out)
	}
	return string(out)
}

// TestNetlinkMatchesNft writes the golden models' full and partial syncs
// once through the netlink writer and once through the nft binary, in
// two network namespaces, and compares what nft lists: the rule compiler
// and the batch encoder must mean exactly what the nft text means.
func TestNetlinkMatchesNft(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nft is not installed")
	}
	v6 := func(a netip.Addr) netip.Addr {
		if a.Is6() {
			return a
		}
		b := a.As4()
		return netip.AddrFrom16([16]byte{0xfd, 0, 12: b[0], 13: b[1], 14: b[2], 15: b[3]})
	}
	tests := []struct {
		name string
		cfg  Config
		npIP []netip.Addr
		ip6  bool
	}{
		{"cluster-cidr", Config{ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), MasqueradeBit: 14}, nil, false},
		{"nodeport-addresses", Config{MasqueradeBit: 14}, []netip.Addr{netip.MustParseAddr("192.168.1.10")}, false},
		{"masquerade-all", Config{MasqueradeAll: true, MasqueradeBit: 0}, nil, false},
		{"ipv6", Config{Family: model.IPv6, ClusterCIDR: netip.MustParsePrefix("fd00::a:f400:0/112"), MasqueradeBit: 14}, nil, true},
		{"ipv6-nodeport-addresses", Config{Family: model.IPv6, MasqueradeBit: 14}, []netip.Addr{netip.MustParseAddr("fd00::10")}, true},
	}
	// toIPv6 rewrites a model's IPv4 addresses into fd00::/96 (again
	// after a change: it leaves IPv6 addresses alone).
	toIPv6 := func(st model.State) {
		for _, sp := range st {
			sp.ClusterIP = v6(sp.ClusterIP)
			for i := range sp.ExternalIPs {
				sp.ExternalIPs[i] = v6(sp.ExternalIPs[i])
			}
			for i := range sp.LoadBalancerIPs {
				sp.LoadBalancerIPs[i] = v6(sp.LoadBalancerIPs[i])
			}
			for i, r := range sp.LoadBalancerSourceRanges {
				if r.Addr().Is4() {
					sp.LoadBalancerSourceRanges[i] = netip.PrefixFrom(v6(r.Addr()), r.Bits()+96)
				}
			}
			for i := range sp.Endpoints {
				sp.Endpoints[i].IP = v6(sp.Endpoints[i].IP)
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			run := func(mk func() nftbatch.Writer) (string, []error) {
				var errs []error
				ns := inNetns(t, func() {
					p := New(tt.cfg, mk())
					state := modeltest.State()
					if tt.ip6 {
						toIPv6(state)
					}
					if _, err := p.Sync(ctx, backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}); err != nil {
						errs = append(errs, fmt.Errorf("full: %w", err))
						return
					}
					changed := modeltest.Change(state)
					if tt.ip6 {
						toIPv6(state)
					}
					if _, err := p.Sync(ctx, backend.Request{State: state, Changed: changed, NodePortIPs: tt.npIP}); err != nil {
						errs = append(errs, fmt.Errorf("partial: %w", err))
						return
					}
					// The periodic full sync, and a restarted proxy's first
					// one, list what the table holds (chains, sets, maps).
					if _, err := p.Sync(ctx, backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}); err != nil {
						errs = append(errs, fmt.Errorf("periodic full: %w", err))
						return
					}
					if _, err := New(tt.cfg, mk()).Sync(ctx, backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}); err != nil {
						errs = append(errs, fmt.Errorf("restarted full: %w", err))
					}
				})
				return ns, errs
			}
			nlNS, errs := run(func() nftbatch.Writer { return NewNetlink(tt.cfg) })
			if len(errs) > 0 {
				t.Fatalf("netlink: %v", errs)
			}
			var nftErr error
			nftNS, errs := run(func() nftbatch.Writer {
				nft, err := NewInterface(tt.cfg)
				if err != nil {
					nftErr = err
					return nftbatch.Exec{NFT: knftables.NewFake(knftables.IPv4Family, DefaultTable)}
				}
				return nftbatch.Exec{NFT: nft}
			})
			if nftErr != nil || len(errs) > 0 {
				t.Fatalf("nft: %v %v", nftErr, errs)
			}
			fam := knftables.IPv4Family
			if tt.ip6 {
				fam = knftables.IPv6Family
			}
			got, want := listTable(t, nlNS, fam), listTable(t, nftNS, fam)
			if got != want {
				t.Errorf("netlink wrote a different table than nft:\n%s", lineDiff(want, got))
			}
			// Cleanup through netlink leaves nothing.
			var cerr error
			inNetnsNamed(t, nlNS, func() { cerr = New(tt.cfg, NewNetlink(tt.cfg)).Cleanup(ctx) })
			if cerr != nil {
				t.Fatal(cerr)
			}
			out, _ := exec.Command("ip", "netns", "exec", nlNS, "nft", "list", "tables").CombinedOutput()
			if strings.Contains(string(out), DefaultTable) {
				t.Errorf("table left after Cleanup: %s", out)
			}
		})
	}
}

func inNetnsNamed(t *testing.T, name string, fn func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + name)
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
		}
		if err == nil {
			fn()
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// lineDiff shows the lines only one side has.
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var b strings.Builder
	for l, n := range count {
		for ; n > 0; n-- {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		for ; n < 0; n++ {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

var nsCounter atomic.Int32
