// Package benchmark measures trireme-netpol at the size issue 24 names:
// 1,000 policies over 10,000 pods in 100 namespaces, 100 of the pods on
// this node, written by the real nft into a network namespace of its own.
// It runs as root under make bench and prints its figures.
package benchmark

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"trireme.dev/netpol/internal/policy"
	"trireme.dev/netpol/internal/ruleset"
)

const (
	namespaces   = 100
	podsPerNS    = 100
	policiesPerN = 10
	apps         = 10
)

// cluster builds the state: namespace i has labels team=t(i%10); its pods
// app=a(j%10), the pod j=0 on this node; its policies select one app each
// and allow it from another app of the namespace, from a team's namespaces
// on a named port, and egress to DNS.
func cluster() *policy.State {
	s := &policy.State{Node: "bench-node", Namespaces: map[string]map[string]string{}}
	for i := range namespaces {
		ns := fmt.Sprintf("ns%d", i)
		s.Namespaces[ns] = map[string]string{"team": fmt.Sprintf("t%d", i%10), "kubernetes.io/metadata.name": ns}
		for j := range podsPerNS {
			node := "other"
			if j == 0 {
				node = s.Node
			}
			s.Pods = append(s.Pods, &policy.Pod{
				Namespace: ns, Name: fmt.Sprintf("p%d", j), Node: node,
				Labels: map[string]string{"app": fmt.Sprintf("a%d", j%apps)},
				IPs:    []netip.Addr{netip.AddrFrom4([4]byte{10, byte(100 + i/50), byte(i % 50 * 5), byte(j)})},
				Ports:  []policy.NamedPort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080}},
			})
		}
		for k := range policiesPerN {
			s.Policies = append(s.Policies, &networkingv1.NetworkPolicy{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pol%d", k)},
				Spec: networkingv1.NetworkPolicySpec{
					PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("a%d", k)}},
					Ingress: []networkingv1.NetworkPolicyIngressRule{
						{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("a%d", (k+1)%apps)}}}}},
						{
							From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": fmt.Sprintf("t%d", k)}}}},
							Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString("http"))}},
						},
					},
					Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(53))}}}},
				},
			})
		}
	}
	return s
}

// BenchmarkScale prints the figures once, whatever b.N: make bench runs
// it with -benchtime 1x.
func BenchmarkScale(b *testing.B) {
	t := b
	if os.Geteuid() != 0 {
		t.Fatal("must run as root: it writes nftables in a network namespace of its own")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Fatal("nft not found: apt-get install -y nftables")
	}
	enterNetns(t)
	w, err := ruleset.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := cluster()

	cpu0, child0 := cpuTimes()
	start := time.Now()
	res := policy.Resolve(s)
	want := ruleset.Render(res)
	if _, err := w.Sync(ctx, want); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	cpu1, child1 := cpuTimes()
	rules, elements := want.Size()
	fmt.Printf("netpol full sync: %d policies, %d pods in %d namespaces, %d local: wall %v, CPU agent %v + nft %v; table %d rules, %d set and map elements; policed pods %d\n",
		len(s.Policies), len(s.Pods), namespaces, namespaces, wall.Round(time.Millisecond), (cpu1 - cpu0).Round(time.Millisecond), (child1 - child0).Round(time.Millisecond), rules, elements, len(res.Pods))

	// One local pod's labels change, 50 times: each time its rules change
	// and the whole state is resolved and written. The partial syncs go
	// over nfnetlink, as the agent's do; then, for comparison, through
	// the nft binary only.
	local := s.Pods[0]
	labelChanges := func(how string) {
		var lat, compute, write []time.Duration
		cpu0, child0 := cpuTimes()
		for i := range 50 {
			local.Labels = map[string]string{"app": fmt.Sprintf("a%d", (i+1)%apps)}
			start := time.Now()
			want := ruleset.Render(policy.Resolve(s))
			computed := time.Now()
			if _, err := w.Sync(ctx, want); err != nil {
				t.Fatal(err)
			}
			lat = append(lat, time.Since(start))
			compute = append(compute, computed.Sub(start))
			write = append(write, time.Since(computed))
		}
		cpu1, child1 := cpuTimes()
		cpu := (cpu1 - cpu0 + child1 - child0) / 50
		q := func(d []time.Duration) (p50, p99 time.Duration) {
			slices.Sort(d)
			return d[len(d)/2].Round(100 * time.Microsecond), d[len(d)*99/100].Round(100 * time.Microsecond)
		}
		l50, l99 := q(lat)
		c50, c99 := q(compute)
		w50, w99 := q(write)
		fmt.Printf("netpol one pod's labels changed (%s): p50 %v, p99 %v (50 syncs; resolving and rendering p50 %v, p99 %v; writing p50 %v, p99 %v; CPU %v a change, nft's included)\n",
			how, l50, l99, c50, c99, w50, w99, cpu.Round(100*time.Microsecond))
	}
	labelChanges("partial syncs over nfnetlink")
	w.Netlink = nil
	labelChanges("partial syncs through nft")
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("netpol peak RSS of the agent's work: %.1f MiB\n", float64(ru.Maxrss)/1024)
}

// cpuTimes returns this process's CPU time and its waited-for children's.
func cpuTimes() (self, children time.Duration) {
	var s, c syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(s.Utime) + tv(s.Stime), tv(c.Utime) + tv(c.Stime)
}

// enterNetns moves the whole test into a new network namespace: nft runs as
// a child, which inherits it, and the host's tables stay untouched.
func enterNetns(t testing.TB) {
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		t.Fatalf("unshare: %v", err)
	}
}
