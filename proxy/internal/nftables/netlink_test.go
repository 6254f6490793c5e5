package nftables

import (
	"context"
	"encoding/binary"
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
			run := func(mk func() Writer) (string, []error) {
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
			nlNS, errs := run(func() Writer { return NewNetlink(tt.cfg) })
			if len(errs) > 0 {
				t.Fatalf("netlink: %v", errs)
			}
			var nftErr error
			nftNS, errs := run(func() Writer {
				nft, err := NewInterface(tt.cfg)
				if err != nil {
					nftErr = err
					return Exec{knftables.NewFake(knftables.IPv4Family, DefaultTable)}
				}
				return Exec{nft}
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

// TestCompileRule checks that the compiler refuses what it does not know
// rather than writing something else (what it accepts is checked against
// nft by TestNetlinkMatchesNft).
func TestCompileRule(t *testing.T) {
	ids := func() uint32 { return 1 }
	for _, tt := range []struct {
		rule string
		ip6  bool
		ok   bool
	}{
		{"ip daddr 10.0.0.1 tcp dport 80 ip saddr != 10.0.0.0/8 meta mark set meta mark | 0x4000", false, true},
		{"meta l4proto udp dnat ip to numgen random mod 3 offset 7 map @service-endpoints-udp-01", false, true},
		{"meta l4proto tcp dnat ip6 to numgen random mod 3 offset 7 map @m", true, true},
		{"numgen random mod 2 vmap { 0 : goto a , 1 : goto b }", false, true},
		{"ip daddr fd00::1 drop", false, false}, // wrong family
		{"ip6 daddr 10.0.0.1 drop", true, false},
		{"counter drop", false, false},
		{"log prefix x", false, false},
		{"ip daddr 10.0.0.1 tcp dport 99999 drop", false, false},
		{"meta mark set meta mark & 0x1", false, false},
		{"dnat ip to numgen random mod x offset 1 map @m", false, false},
	} {
		_, _, err := compileRule(tt.ip6, tt.rule, ids)
		if (err == nil) != tt.ok {
			t.Errorf("compileRule(%q) = %v, want ok=%v", tt.rule, err, tt.ok)
		}
	}
}

// TestBatchChunks encodes a batch larger than one chunk and checks that
// every chunk holds whole messages, that no chunk outgrew its capacity,
// that the batch begins and ends as the kernel wants it, and that only
// the last message before BATCH_END asks for an acknowledgement.
func TestBatchChunks(t *testing.T) {
	for _, streamed := range []bool{true, false} {
		t.Run(fmt.Sprintf("streamed=%v", streamed), func(t *testing.T) {
			n := NewNetlink(Config{})
			tx := &Transaction{family: knftables.IPv4Family, table: DefaultTable}
			if streamed {
				enc, err := n.newEncoder()
				if err != nil {
					t.Fatal(err)
				}
				tx.enc = enc
			}
			tx.Add(&knftables.Map{Name: "service-endpoints-tcp-00", TypeOf: "numgen random mod 1 : ip daddr . tcp dport"})
			for i := range 60000 {
				ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
				tx.AddEndpoint("service-endpoints-tcp-00", uint32(i), netip.AddrPortFrom(ip, 8080))
				tx.AddAddrPair(setHairpin, ip)
				if i%100 == 0 {
					tx.Add(&knftables.Chain{Name: fmt.Sprintf("service-%d", i)})
				}
			}
			enc := tx.enc
			if enc == nil {
				var err error
				if enc, err = n.newEncoder(); err != nil {
					t.Fatal(err)
				}
				for i := range tx.ops {
					if err := enc.add(&tx.ops[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tx.err != nil {
				t.Fatal(tx.err)
			}
			enc.finish()
			bufs := append(enc.chunks, enc.buf)
			if len(bufs) < 3 {
				t.Fatalf("%d chunks, want several", len(bufs))
			}
			var types []uint16
			var acks []int
			for c, b := range bufs {
				if c < len(bufs)-1 && cap(b) > chunkSize {
					t.Errorf("chunk %d grew to %d bytes", c, cap(b))
				}
				off := 0
				for off < len(b) {
					l := int(binary.NativeEndian.Uint32(b[off:]))
					if l < nlmsgHdrLen || off+l > len(b) {
						t.Fatalf("chunk %d: message at %d of length %d overruns %d bytes", c, off, l, len(b))
					}
					types = append(types, binary.NativeEndian.Uint16(b[off+4:]))
					if binary.NativeEndian.Uint16(b[off+6:])&unix.NLM_F_ACK != 0 {
						acks = append(acks, len(types)-1)
					}
					off += l
				}
			}
			if types[0] != unix.NFNL_MSG_BATCH_BEGIN || types[len(types)-1] != unix.NFNL_MSG_BATCH_END {
				t.Errorf("batch starts with type %d and ends with %d", types[0], types[len(types)-1])
			}
			if _, ok := enc.markLast(); !ok {
				t.Fatal("no message to acknowledge")
			}
			acks = acks[:0]
			i := 0
			for _, b := range bufs {
				for off := 0; off < len(b); off += int(binary.NativeEndian.Uint32(b[off:])) {
					if binary.NativeEndian.Uint16(b[off+6:])&unix.NLM_F_ACK != 0 {
						acks = append(acks, i)
					}
					i++
				}
			}
			if len(acks) != 1 || acks[0] != len(types)-2 {
				t.Errorf("acknowledgement asked by messages %v, want only %d", acks, len(types)-2)
			}
		})
	}
}
