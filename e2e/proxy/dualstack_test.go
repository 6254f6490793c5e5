package proxy_test

import (
	"trireme.dev/componentbase/netns"

	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"
)

// TestDualStack runs one proxy serving both IP families and reaches a
// dual-stack Service's IPv4 and IPv6 ClusterIPs, and its NodePort on the
// node's IPv4 and IPv6 addresses, from a client namespace. The nftables
// proxy is dual-stack by its two clusterCIDRs, the iptables one by its
// Node's addresses.
//
// The Service, its EndpointSlices and the Node live in a trireme-apiserver
// started with an IPv4 and an IPv6 service range, which allocates the
// Service's two ClusterIPs.
func TestDualStack(t *testing.T) {
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		t.Fatal("the kernel has no IPv6: dual-stack cannot be tested")
	}
	for i, mode := range []string{"nftables", "iptables"} {
		t.Run(mode, func(t *testing.T) {
			testDualStack(t, mode, subnet(4+i))
		})
	}
}

func testDualStack(t *testing.T, mode string, k int) {
	tp := newTopology(t, "ds"+mode[:1], k)
	// IPv6 beside the IPv4 addresses: fd00:7471:K::/64 is the pod
	// network, fd00:7470:K::/64 the client's link. nodad: the addresses
	// are usable at once.
	v6 := func(net string, host int) string { return fmt.Sprintf("fd00:%s:%x::%x", net, k, host) }
	n := tp.node
	netns.IP(t, "netns", "exec", n, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
	netns.IP(t, "-n", n, "addr", "add", v6("7471", 1)+"/64", "dev", "br0", "nodad")
	ep6 := []string{v6("7471", 0x11), v6("7471", 0x12)}
	for i, ep := range tp.eps {
		netns.IP(t, "-n", ep, "addr", "add", ep6[i]+"/64", "dev", "eth0", "nodad")
		netns.IP(t, "-n", ep, "-6", "route", "add", "default", "via", v6("7471", 1))
	}
	node6 := v6("7470", 1)
	netns.IP(t, "-n", n, "addr", "add", node6+"/64", "dev", "veth-client", "nodad")
	netns.IP(t, "-n", tp.client, "addr", "add", v6("7470", 2)+"/64", "dev", "eth0", "nodad")
	netns.IP(t, "-n", tp.client, "-6", "route", "add", "default", "via", node6)
	netns.IP(t, "-n", n, "-6", "route", "add", "default", "via", v6("7470", 2))
	for i := range tp.eps {
		tp.serve(t, i, 8080)
	}

	cip4, cip6 := fmt.Sprintf("10.97.%d.20", k), v6("96", 0x20)
	nodePort := int32(31000 + k)
	// The apiserver holds the dual-stack Service: its ranges are the two
	// families' /24 and /112 around the ClusterIPs the test asks for.
	api := testcluster.StartAPIServer(t, testcluster.APIServerOptions{
		ServiceClusterIPRange: fmt.Sprintf("10.97.%d.0/24,%s/112", k, v6("96", 0)),
	})
	createDualStackObjects(t, api.Clientset(t), tp, ep6, cip4, cip6, nodeNameDS, node6, nodePort)

	// nftables is told both pod networks; iptables only the IPv4 one, so
	// that its second family comes from the Node's addresses.
	podCIDRs := tp.podCIDR + "," + v6("7471", 0) + "/64"
	if mode == "iptables" {
		podCIDRs = tp.podCIDR
	}
	log, stop := startDualStackProxy(t, tp, mode, api, podCIDRs)
	defer stop()

	c := httpClient(tp.client)
	for _, url := range []string{
		"http://" + cip4 + ":80/",
		"http://[" + cip6 + "]:80/",
		fmt.Sprintf("http://%s:%d/", tp.nodeIP, nodePort),
		fmt.Sprintf("http://[%s]:%d/", node6, nodePort),
	} {
		waitFor(t, 20*time.Second, log, "an answer from "+url, func() bool { _, err := get(c, url); return err == nil })
		counts := spread(t, c, url, 40)
		if len(counts) != len(tp.eps) {
			t.Errorf("%s: answers %v, want every endpoint", url, counts)
		}
		t.Logf("%s: %v", url, counts)
	}
	if !strings.Contains(log.String(), `"families": ["IPv4", "IPv6"]`) {
		t.Errorf("the proxy did not start dual-stack; log:\n%s", testcluster.Tail(log.String(), 20))
	}

	hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: netns.Dialer(tp.node), DisableKeepAlives: true}}
	resp, err := hc.Get("http://127.0.0.1:10256/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Healthy  bool                       `json:"healthy"`
		Families map[string]json.RawMessage `json:"families"`
	}
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !health.Healthy || len(health.Families) != 2 {
		t.Errorf("healthz: %d %+v %v", resp.StatusCode, health, err)
	}

	stop()
	if out, err := exec.Command("ip", proxyCommand(tp, "", "--cleanup", "--cluster-cidr", podCIDRs)...).CombinedOutput(); err != nil {
		t.Fatalf("--cleanup: %v: %s", err, out)
	}
	left := tp.rulesLeft(t)
	out, _ := exec.Command("ip", "netns", "exec", tp.node, "ip6tables-save").CombinedOutput()
	if strings.Contains(string(out), "TRIREME") {
		left += "\nip6tables: " + string(out)
	}
	if left != "" {
		t.Errorf("left after --cleanup:\n%s", left)
	}
}

const nodeNameDS = "tpx-ds-node"

// createDualStackObjects stores, through the dual-stack apiserver, the Node
// (with an address of each family), a RequireDualStack NodePort Service
// asking for cip4 and cip6, and its EndpointSlice of each family.
func createDualStackObjects(t *testing.T, cs kubernetes.Interface, tp *topology, ep6 []string, cip4, cip6, node, node6 string, nodePort int32) {
	t.Helper()
	ctx := context.Background()
	nodeObj, err := cs.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodeObj.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: tp.nodeIP}, {Type: v1.NodeInternalIP, Address: node6}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, nodeObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services("default").Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "dual"},
		Spec: v1.ServiceSpec{
			Type: v1.ServiceTypeNodePort, ClusterIP: cip4, ClusterIPs: []string{cip4, cip6},
			IPFamilyPolicy: ptr.To(v1.IPFamilyPolicyRequireDualStack),
			Ports:          []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP, NodePort: nodePort}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}; !slices.Equal(svc.Spec.IPFamilies, want) || !slices.Equal(svc.Spec.ClusterIPs, []string{cip4, cip6}) {
		t.Fatalf("dual-stack Service stored with clusterIPs %v families %v", svc.Spec.ClusterIPs, svc.Spec.IPFamilies)
	}
	for _, es := range []struct {
		name string
		at   discovery.AddressType
		ips  []string
	}{{"dual-v4", discovery.AddressTypeIPv4, tp.epIPs}, {"dual-v6", discovery.AddressTypeIPv6, ep6}} {
		slice := &discovery.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: es.name, Labels: map[string]string{discovery.LabelServiceName: "dual"}},
			AddressType: es.at,
			Ports:       []discovery.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
		}
		for _, a := range es.ips {
			slice.Endpoints = append(slice.Endpoints, discovery.Endpoint{Addresses: []string{a}, Conditions: discovery.EndpointConditions{Ready: ptr.To(true)}})
		}
		if _, err := cs.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// startDualStackProxy runs the proxy in the node namespace against the
// dual-stack apiserver, reached through a relay listening inside the
// namespace. stop ends it; calling it again does nothing.
func startDualStackProxy(t *testing.T, tp *topology, mode string, api *testcluster.APIServer, clusterCIDR string) (*testcluster.LogBuffer, func()) {
	t.Helper()
	bin, err := testcluster.Binary("trireme-proxy")
	if err != nil {
		t.Fatal(err)
	}
	kc := netns.RelayKubeconfig(t, tp.node, api.KubeconfigPath(), api.Port(), t.TempDir())
	log := &testcluster.LogBuffer{}
	proc, err := testcluster.StartProcess("ip", []string{"netns", "exec", tp.node, bin,
		"--kubeconfig", kc, "--hostname-override", nodeNameDS, "--proxy-mode", mode,
		"--cluster-cidr", clusterCIDR, "--min-sync-period", "100ms",
		"--healthz-bind-address", "127.0.0.1:10256", "--metrics-bind-address", "127.0.0.1:10249", "-v", "2"}, log)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = proc.Stop(10 * time.Second)
			_ = exec.Command("ip", proxyCommand(tp, "", "--cleanup", "--cluster-cidr", clusterCIDR)...).Run()
		})
	}
	t.Cleanup(stop)
	return log, stop
}
