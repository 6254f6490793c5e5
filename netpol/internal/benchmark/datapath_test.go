package benchmark

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/componentbase/netns"
	"trireme.dev/netpol/internal/policy"
	"trireme.dev/netpol/internal/ruleset"
)

// BenchmarkDataPath measures TCP between two pods of one node, across its
// bridge, with the table and no policy, then with the table of 1,000
// policies over 10,000 pods in force (the two pods among those policed, a policy of their
// namespace allowing them): connections per second and throughput.
func BenchmarkDataPath(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Fatal("must run as root: it makes network namespaces")
	}
	p := fmt.Sprintf("bnp%d", os.Getpid()%100000)
	node, client, server := p+"-node", p+"-a", p+"-b"
	for _, ns := range []string{node, client, server} {
		netns.IP(b, "netns", "add", ns)
		b.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		netns.IP(b, "-n", ns, "link", "set", "lo", "up")
	}
	netns.IP(b, "netns", "exec", node, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1")
	netns.IP(b, "-n", node, "link", "add", "br0", "type", "bridge")
	netns.IP(b, "-n", node, "link", "set", "br0", "up")
	// Pods p0 of namespaces ns0 and ns1 in the state below.
	addrs := map[string]string{client: "10.100.0.0", server: "10.100.25.0"}
	for ns, addr := range addrs {
		veth := "v" + ns[len(ns)-1:]
		netns.IP(b, "-n", node, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
		netns.IP(b, "-n", node, "link", "set", veth, "master", "br0", "up")
		netns.IP(b, "-n", ns, "addr", "add", addr+"/8", "dev", "eth0")
		netns.IP(b, "-n", ns, "link", "set", "eth0", "up")
	}
	var ln net.Listener
	if err := netns.Run(server, func() (err error) { ln, err = net.Listen("tcp", ":8080"); return err }); err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	target := net.JoinHostPort(addrs[server], "8080")
	dial := netns.Dialer(client)

	measure := func(label string) {
		ctx := context.Background()
		n, start := 0, time.Now()
		for time.Since(start) < 3*time.Second {
			c, err := dial(ctx, "tcp", target)
			if err != nil {
				b.Fatalf("%s: connect: %v", label, err)
			}
			c.Close()
			n++
		}
		rate := float64(n) / time.Since(start).Seconds()
		c, err := dial(ctx, "tcp", target)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 256<<10)
		sent, start := 0, time.Now()
		for time.Since(start) < 3*time.Second {
			m, err := c.Write(buf)
			if err != nil {
				b.Fatal(err)
			}
			sent += m
		}
		c.Close()
		fmt.Printf("netpol data path, %s: %.0f TCP connections/s, %.2f Gbit/s\n", label, rate, float64(sent)*8/time.Since(start).Seconds()/1e9)
	}
	// The same node with the table and no policy: conntrack is on, as on
	// any node with Services.
	var w *ruleset.Writer
	if err := netns.Run(node, func() (err error) {
		if w, err = ruleset.NewWriter(); err != nil {
			return err
		}
		_, err = w.Sync(context.Background(), ruleset.Render(policy.Resolve(&policy.State{Node: "bench-node"})))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	measure("no policy")

	// The benchmark's state, with pod p0 of ns0 (the client) and of ns5
	// (the server) on this node, their own namespaces' policies letting
	// the client out to ns5 and ns5 letting it in: both of its chains are
	// walked.
	s := cluster()
	for _, pod := range s.Pods {
		pod.Node = "other"
		if pod.Name == "p0" && (pod.Namespace == "ns0" || pod.Namespace == "ns5") {
			pod.Node = s.Node
		}
	}
	s.Policies = append(s.Policies, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns5", Name: "from-ns0"},
		Spec:       networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ns0"}}}}}}},
	})
	s.Policies = append(s.Policies, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns0", Name: "to-ns5"},
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ns5"}}}}}}},
	})
	if got := s.Pods[0].IPs[0]; got != netip.MustParseAddr(addrs[client]) {
		b.Fatalf("the client is %v in the state, %s in its namespace", got, addrs[client])
	}
	res := policy.Resolve(s)
	want := ruleset.Render(res)
	rules, elements := want.Size()
	if err := netns.Run(node, func() error {
		_, err := w.Sync(context.Background(), want)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	measure(fmt.Sprintf("%d policies, %d rules and %d elements in force", len(s.Policies), rules, elements))
}
