package iptables

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"trireme.dev/componentbase/golden"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
	"trireme.dev/proxy/internal/model/modeltest"
)

// recorder is an Executor that records what it is asked to do, with
// iptables-save showing the chains named in earlier restores.
type recorder struct {
	log    []string
	chains map[string]bool
}

func (r *recorder) Restore(_ context.Context, data []byte) error {
	r.log = append(r.log, "iptables-restore --noflush <<\n"+string(data))
	for _, l := range strings.Split(string(data), "\n") {
		if c, ok := strings.CutPrefix(l, ":"); ok {
			c, _, _ = strings.Cut(c, " ")
			r.chains[c] = true
		}
		if c, ok := strings.CutPrefix(l, "-X "); ok {
			delete(r.chains, c)
		}
	}
	return nil
}

func (r *recorder) Save(_ context.Context, table string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s\n", table)
	for c := range r.chains {
		fmt.Fprintf(&b, ":%s - [0:0]\n", c)
	}
	return []byte(b.String()), nil
}

func (r *recorder) Run(_ context.Context, args ...string) error {
	r.log = append(r.log, "iptables "+strings.Join(args, " "))
	if len(args) > 2 && args[2] == "-C" {
		return fmt.Errorf("no such rule")
	}
	return nil
}

// TestGoldenDualStack renders each family's part of a dual-stack model
// as iptables-restore and ip6tables-restore input, as a dual-stack
// proxy's two back ends write it.
func TestGoldenDualStack(t *testing.T) {
	for _, tt := range []struct {
		fam    model.Family
		golden string
	}{{model.IPv4, "dualstack-ipv4.txt"}, {model.IPv6, "dualstack-ipv6.txt"}} {
		t.Run(tt.fam.String(), func(t *testing.T) {
			rec := &recorder{chains: map[string]bool{}}
			p := New(Config{Family: tt.fam, ClusterCIDR: modeltest.DualStackCIDR[tt.fam], MasqueradeBit: 14}, rec)
			if _, err := p.Sync(context.Background(), backend.Request{State: modeltest.DualStack(tt.fam), Full: true, NodePortIPs: modeltest.DualStackNodeIPs[tt.fam]}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.golden, strings.Join(rec.log, "\n"))
		})
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		npIP []netip.Addr
	}{
		{"cluster-cidr", Config{ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), MasqueradeBit: 14}, nil},
		{"nodeport-addresses", Config{MasqueradeBit: 14}, []netip.Addr{netip.MustParseAddr("192.168.1.10")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			rec := &recorder{chains: map[string]bool{}}
			p := New(tt.cfg, rec)
			state := modeltest.State()
			if _, err := p.Sync(ctx, backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+"-full.txt", strings.Join(rec.log, "\n"))
			rec.log = nil
			changed := modeltest.Change(state)
			if _, err := p.Sync(ctx, backend.Request{State: state, Changed: changed, NodePortIPs: tt.npIP}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+"-partial.txt", strings.Join(rec.log, "\n"))
		})
	}
}

// TestSections checks the split of a large nat table into sections: each
// holds at most maxChainsPerCommit Service chains, keeps a Service's
// chains together, and jumps only to chains declared in it or before it.
func TestSections(t *testing.T) {
	st := model.State{}
	const services = 2*maxChainsPerCommit + 100
	for i := range services {
		n := model.ServicePortName{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("svc-%d", i)}, Port: "p", Protocol: v1.ProtocolTCP}
		sp := &model.ServicePort{Name: n, ClusterIP: netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}), Port: 80, Protocol: v1.ProtocolTCP,
			Endpoints: []model.Endpoint{{IP: netip.AddrFrom4([4]byte{10, 244, byte(i >> 8), byte(i)}), Port: 8080, Ready: true, Serving: true}}}
		if i%2 == 0 {
			sp.NodePort = int32(30000 + i) // an EXT chain jumping to the SVC chain
		}
		st[n] = sp
	}
	for _, tt := range []struct {
		name     string
		full     bool
		existing map[string][]string
		state    model.State
		sections int
	}{
		// A filter section, and nat sections of whole Services (SVC and
		// EXT chains) of about maxChainsPerCommit chains.
		{"full sync of many Services", true, nil, st, 1 + (services*3/2+maxChainsPerCommit-1)/maxChainsPerCommit},
		{"full sync deleting many stale chains", true, map[string][]string{tableNAT: staleChains(2*maxChainsPerCommit + 1)}, model.State{}, 1 + 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Config{ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), MasqueradeBit: 14}, &recorder{chains: map[string]bool{}})
			data, _, _ := p.Plan(backend.Request{State: tt.state, Full: tt.full}, tt.full, tt.existing)
			declared := map[string]bool{"MARK": true, "DNAT": true, "RETURN": true, "MASQUERADE": true, "REJECT": true, "DROP": true}
			sections := 0
			var chains int
			var svcOf map[string]int
			for _, l := range strings.Split(string(data), "\n") {
				switch {
				case strings.HasPrefix(l, "*"):
					sections++
					chains, svcOf = 0, map[string]int{}
				case strings.HasPrefix(l, ":"):
					c, _, _ := strings.Cut(l[1:], " ")
					declared[c] = true
					if !isFixed(c) {
						chains++
					}
					if h, ok := strings.CutPrefix(c, Prefix+"EXT-"); ok {
						svcOf[h]++
					}
					if h, ok := strings.CutPrefix(c, Prefix+"SVC-"); ok {
						svcOf[h]++
					}
				case l == "COMMIT":
					if chains > maxChainsPerCommit+1 {
						t.Errorf("section %d declares %d chains", sections, chains)
					}
				case strings.HasPrefix(l, "-A "):
					f := strings.Fields(l)
					if target := f[len(f)-1]; strings.HasPrefix(target, Prefix) && !declared[target] {
						t.Errorf("section %d jumps to %s before it is declared: %s", sections, target, l)
					}
				}
			}
			if sections != tt.sections {
				t.Errorf("%d sections, want %d", sections, tt.sections)
			}
		})
	}
}

func staleChains(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%sSVC-STALE%05d", Prefix, i))
	}
	return out
}

// TestHairpinMarks: an endpoint gets the rule that marks its own traffic for
// masquerading unless its slice names another node.
func TestHairpinMarks(t *testing.T) {
	n := model.ServicePortName{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}, Port: "p", Protocol: v1.ProtocolTCP}
	ep := func(last byte, local, remote bool) model.Endpoint {
		return model.Endpoint{IP: netip.AddrFrom4([4]byte{10, 244, 1, last}), Port: 8080, Ready: true, Serving: true, Local: local, Remote: remote}
	}
	st := model.State{n: &model.ServicePort{Name: n, ClusterIP: netip.MustParseAddr("10.96.0.20"), Port: 80, Protocol: v1.ProtocolTCP,
		Endpoints: []model.Endpoint{ep(1, true, false), ep(2, false, true), ep(3, false, false)}}}
	p := New(Config{ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), MasqueradeBit: 14}, &recorder{chains: map[string]bool{}})
	data, _, _ := p.Plan(backend.Request{State: st, Full: true}, true, nil)
	for _, tt := range []struct {
		ip   string
		want bool
	}{{"10.244.1.1/32", true}, {"10.244.1.2/32", false}, {"10.244.1.3/32", true}} {
		if got := strings.Contains(string(data), "-s "+tt.ip+" -j MARK"); got != tt.want {
			t.Errorf("hairpin mark for %s: %v, want %v\n%s", tt.ip, got, tt.want, data)
		}
	}
}
