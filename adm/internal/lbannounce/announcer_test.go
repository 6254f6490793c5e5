package lbannounce

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"trireme.dev/adm/internal/vip"

	"trireme.dev/componentbase/testwait"
)

// fakeNetwork records the addresses on one node's interfaces.
type fakeNetwork struct {
	mu        sync.Mutex
	addrs     map[string]bool // interface/address
	announced map[string]int
}

func newFakeNetwork(addrs ...string) *fakeNetwork {
	f := &fakeNetwork{addrs: map[string]bool{}, announced: map[string]int{}}
	for _, a := range addrs {
		f.addrs[a] = true
	}
	return f
}

func (f *fakeNetwork) Add(iface string, ip net.IP) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addrs[iface+"/"+ip.String()] = true
	return nil
}

func (f *fakeNetwork) Delete(iface string, ip net.IP) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.addrs, iface+"/"+ip.String())
	return nil
}

func (f *fakeNetwork) Announce(iface string, ip net.IP) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.announced[iface+"/"+ip.String()]++
	return nil
}

func (f *fakeNetwork) has(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addrs[key]
}

func readyNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func lbService(name, ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{IP: ip, IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)}}}}}
}

// start runs an announcer for node until the test ends or stop is called.
func start(t *testing.T, c *fake.Clientset, node string, n vip.Network) (stop func()) {
	t.Helper()
	le := vip.DefaultLease()
	le.ResourceName = DefaultLeasePrefix
	// Whole seconds: the Lease stores its duration in seconds.
	le.LeaseDuration.Duration = 2 * time.Second
	le.RenewDeadline.Duration = 1500 * time.Millisecond
	le.RetryPeriod.Duration = 200 * time.Millisecond
	a := New(Config{NodeName: node, Identity: node + "_1", NodeInterface: "eth0", Lease: le, Announcements: 2},
		Clients{Lease: c, Watch: c}, n, logr.Discard())
	a.interfaceOn = func(net.IP) (string, bool) { return "", false }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// TestFailover: of two nodes exactly one announces the address; when it
// stops it takes the address off and the other takes it over; a Service
// deleted takes its address off the node.
func TestFailover(t *testing.T) {
	const ip = "192.168.50.1"
	c := fake.NewClientset(readyNode("node-a"), readyNode("node-b"), lbService("web", ip))
	netA := newFakeNetwork("eth0/" + ip) // stale, from a killed announcer
	netB := newFakeNetwork()
	stopA := start(t, c, "node-a", netA)
	start(t, c, "node-b", netB)
	owner := Owner(netipMust(ip), []string{"node-a", "node-b"})
	first, firstNet, otherNet := "node-a", netA, netB
	if owner == "node-b" {
		first, firstNet, otherNet = "node-b", netB, netA
	}
	testwait.ForTrue(t, 15*time.Second, first+" to hold the address", func() bool { return firstNet.has("eth0/" + ip) })
	testwait.ForTrue(t, 15*time.Second, "the other to have no address", func() bool { return !otherNet.has("eth0/" + ip) })
	testwait.ForTrue(t, 15*time.Second, first+" to announce it twice", func() bool {
		firstNet.mu.Lock()
		defer firstNet.mu.Unlock()
		return firstNet.announced["eth0/"+ip] >= 2
	})
	if first == "node-b" {
		t.Log("node-b owns the address: stopping node-a changes nothing; checking deletion instead")
		stopA()
		time.Sleep(500 * time.Millisecond)
		if !netB.has("eth0/" + ip) {
			t.Fatal("node-b dropped the address when node-a stopped")
		}
	} else {
		stopA()
		if netA.has("eth0/" + ip) {
			t.Error("node-a kept the address after it stopped")
		}
		testwait.ForTrue(t, 15*time.Second, "node-b to take the address over", func() bool { return netB.has("eth0/" + ip) })
	}
	if err := c.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.ForTrue(t, 15*time.Second, "node-b to drop the deleted Service's address", func() bool { return !netB.has("eth0/" + ip) })
}

// TestNodeNotReady: a node that turns NotReady gives its addresses up to
// the others, and takes them back when Ready again.
func TestNodeNotReady(t *testing.T) {
	const ip = "192.168.50.7"
	c := fake.NewClientset(readyNode("node-a"), readyNode("node-b"), lbService("web", ip))
	nets := map[string]*fakeNetwork{"node-a": newFakeNetwork(), "node-b": newFakeNetwork()}
	start(t, c, "node-a", nets["node-a"])
	start(t, c, "node-b", nets["node-b"])
	owner := Owner(netipMust(ip), []string{"node-a", "node-b"})
	other := map[string]string{"node-a": "node-b", "node-b": "node-a"}[owner]
	testwait.ForTrue(t, 15*time.Second, owner+" to hold the address", func() bool { return nets[owner].has("eth0/" + ip) })
	n := readyNode(owner)
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	if _, err := c.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.ForTrue(t, 15*time.Second, other+" to take the address", func() bool { return nets[other].has("eth0/"+ip) && !nets[owner].has("eth0/"+ip) })
	if _, err := c.CoreV1().Nodes().UpdateStatus(context.Background(), readyNode(owner), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.ForTrue(t, 15*time.Second, owner+" to take it back", func() bool { return nets[owner].has("eth0/"+ip) && !nets[other].has("eth0/"+ip) })
}
