package nftbatch

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/knftables"
)

// TestCompileRule checks that the compiler refuses what it does not know
// rather than writing something else (what it accepts is checked against
// nft by its users' tests: the proxy's TestNetlinkMatchesNft and
// trireme-netpol's TestNetlinkMatchesNft).
func TestCompileRule(t *testing.T) {
	ids := func() uint32 { return 1 }
	ip4, ip6, inet := knftables.IPv4Family, knftables.IPv6Family, knftables.InetFamily
	for _, tt := range []struct {
		rule string
		fam  knftables.Family
		ok   bool
	}{
		{"ip daddr 10.0.0.1 tcp dport 80 ip saddr != 10.0.0.0/8 meta mark set meta mark | 0x4000", ip4, true},
		{"meta l4proto udp dnat ip to numgen random mod 3 offset 7 map @service-endpoints-udp-01", ip4, true},
		{"meta l4proto tcp dnat ip6 to numgen random mod 3 offset 7 map @m", ip6, true},
		{"numgen random mod 2 vmap { 0 : goto a , 1 : goto b }", ip4, true},
		{"ip daddr fd00::1 drop", ip4, false}, // wrong family
		{"ip6 daddr 10.0.0.1 drop", ip6, false},
		{"ip6 daddr fd00::1 drop", ip4, false},
		{"counter drop", ip4, false},
		{"log prefix x", ip4, false},
		{"ip daddr 10.0.0.1 tcp dport 99999 drop", ip4, false},
		{"meta mark set meta mark & 0x1", ip4, false},
		{"dnat ip to numgen random mod x offset 1 map @m", ip4, false},
		// trireme-netpol's rules, in an inet table.
		{"ct state established,related accept", inet, true},
		{"ct state establish accept", inet, false},
		{"ip saddr vmap @egress-pods", inet, true},
		{"ip6 saddr @peers-x tcp dport 80-90 counter name \"accept-x-ns/p/ingress/0\" return", inet, true},
		{"ip daddr . meta l4proto . th dport @named-x goto tier2-x", inet, true},
		{"ip saddr 10.0.0.0/8 ip6 daddr fd00::1 drop", inet, false}, // both families
		{"tcp dport 90-80 drop", inet, false},
		{"counter name unquoted drop", inet, false},
		{"ip daddr != @local-pods drop", inet, false},
		{"ip saddr 10.0.0.0/8 ip saddr != { 10.1.0.0/16 } return", inet, false},
		{"limit rate 10/second burst 20 packets log prefix \"np\" group 7", inet, false},
	} {
		_, _, err := compileRule(tt.fam, tt.rule, ids)
		if (err == nil) != tt.ok {
			t.Errorf("compileRule(%s, %q) = %v, want ok=%v", tt.fam, tt.rule, err, tt.ok)
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
			n := NewNetlink(knftables.IPv4Family, "trireme-proxy")
			tx := NewTransaction(knftables.IPv4Family, "trireme-proxy")
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
				tx.AddAddrPair("hairpin", ip)
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
