package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"trireme.dev/e2e/framework"
)

// TestDualStack runs one proxy serving both IP families and reaches a
// dual-stack Service's IPv4 and IPv6 ClusterIPs, and its NodePort on the
// node's IPv4 and IPv6 addresses, from a client namespace. The nftables
// proxy is dual-stack by its two clusterCIDRs, the iptables one by its
// Node's addresses.
//
// trireme-apiserver allocates ClusterIPs from one IPv4 range and cannot
// hold a dual-stack Service yet, so this test serves the proxy its Node,
// Service and EndpointSlices from a small list/watch server of its own;
// the rules and the packets through them are real.
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
	ip(t, "netns", "exec", n, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
	ip(t, "-n", n, "addr", "add", v6("7471", 1)+"/64", "dev", "br0", "nodad")
	ep6 := []string{v6("7471", 0x11), v6("7471", 0x12)}
	for i, ep := range tp.eps {
		ip(t, "-n", ep, "addr", "add", ep6[i]+"/64", "dev", "eth0", "nodad")
		ip(t, "-n", ep, "-6", "route", "add", "default", "via", v6("7471", 1))
	}
	node6 := v6("7470", 1)
	ip(t, "-n", n, "addr", "add", node6+"/64", "dev", "veth-client", "nodad")
	ip(t, "-n", tp.client, "addr", "add", v6("7470", 2)+"/64", "dev", "eth0", "nodad")
	ip(t, "-n", tp.client, "-6", "route", "add", "default", "via", node6)
	ip(t, "-n", n, "-6", "route", "add", "default", "via", v6("7470", 2))
	for i := range tp.eps {
		tp.serve(t, i, 8080)
	}

	cip4, cip6 := fmt.Sprintf("10.97.%d.20", k), v6("96", 0x20)
	nodePort := int32(31000 + k)
	api := newObjectServer(t, dualStackObjects(tp, ep6, cip4, cip6, nodeNameDS, node6, nodePort))

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
		t.Errorf("the proxy did not start dual-stack; log:\n%s", tail(log.String(), 20))
	}

	hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: dialer(tp.node), DisableKeepAlives: true}}
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

// dualStackObjects are the Node (with an address of each family), a
// dual-stack NodePort Service and its EndpointSlice of each family.
func dualStackObjects(tp *topology, ep6 []string, cip4, cip6, node, node6 string, nodePort int32) map[string][]runtime.Object {
	svc := &v1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dual", ResourceVersion: "1", UID: "dual-uid"},
		Spec: v1.ServiceSpec{
			Type: v1.ServiceTypeNodePort, ClusterIP: cip4, ClusterIPs: []string{cip4, cip6},
			IPFamilies:     []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol},
			IPFamilyPolicy: ptr.To(v1.IPFamilyPolicyRequireDualStack),
			Ports:          []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, NodePort: nodePort}},
		},
	}
	slice := func(name string, at discovery.AddressType, ips []string) *discovery.EndpointSlice {
		es := &discovery.EndpointSlice{
			TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: "1",
				Labels: map[string]string{discovery.LabelServiceName: "dual"}},
			AddressType: at,
			Ports:       []discovery.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
		}
		for _, a := range ips {
			es.Endpoints = append(es.Endpoints, discovery.Endpoint{Addresses: []string{a}, Conditions: discovery.EndpointConditions{Ready: ptr.To(true)}})
		}
		return es
	}
	nodeObj := &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: node, ResourceVersion: "1"},
		Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: tp.nodeIP}, {Type: v1.NodeInternalIP, Address: node6},
		}},
	}
	return map[string][]runtime.Object{
		"/api/v1/services": {svc},
		"/apis/discovery.k8s.io/v1/endpointslices": {
			slice("dual-v4", discovery.AddressTypeIPv4, tp.epIPs), slice("dual-v6", discovery.AddressTypeIPv6, ep6),
		},
		"/api/v1/nodes": {nodeObj},
	}
}

// objectServer answers the proxy's lists, watches (which stay open with
// nothing more to say), gets of single objects and Event posts, over
// plain HTTP on the test's loopback.
type objectServer struct {
	addr string
	objs map[string][]runtime.Object
}

var listKinds = map[string]string{"/api/v1/services": "ServiceList", "/apis/discovery.k8s.io/v1/endpointslices": "EndpointSliceList", "/api/v1/nodes": "NodeList"}

func newObjectServer(t *testing.T, objs map[string][]runtime.Object) *objectServer {
	t.Helper()
	s := &objectServer{objs: objs}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var once sync.Once
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, done) }), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		once.Do(func() { close(done) })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	s.addr = ln.Addr().String()
	return s
}

func (s *objectServer) serve(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodPost {
		// Events the proxy records: accepted and dropped.
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","namespace":"default"}}`))
		return
	}
	path := r.URL.Path
	items, ok := s.objs[path]
	if !ok {
		// A single Node by name.
		dir, name := path[:strings.LastIndex(path, "/")], path[strings.LastIndex(path, "/")+1:]
		for _, o := range s.objs[dir] {
			if m, err := metaOf(o); err == nil && m.GetName() == name {
				_ = json.NewEncoder(w).Encode(o)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"NotFound","code":404}`))
		return
	}
	if r.URL.Query().Get("watch") == "true" {
		flusher, _ := w.(http.Flusher)
		w.WriteHeader(http.StatusOK)
		enc := json.NewEncoder(w)
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			for _, o := range items {
				_ = enc.Encode(map[string]any{"type": "ADDED", "object": o})
			}
			kind := strings.TrimSuffix(listKinds[path], "List")
			apiVersion := "v1"
			if strings.HasPrefix(path, "/apis/discovery") {
				apiVersion = "discovery.k8s.io/v1"
			}
			_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{"apiVersion": apiVersion, "kind": kind,
				"metadata": map[string]any{"resourceVersion": "1", "annotations": map[string]string{"k8s.io/initial-events-end": "true"}}}})
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
		return
	}
	apiVersion := "v1"
	if strings.HasPrefix(path, "/apis/discovery") {
		apiVersion = "discovery.k8s.io/v1"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": apiVersion, "kind": listKinds[path],
		"metadata": map[string]any{"resourceVersion": "1"}, "items": items})
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", o)
	}
	return m, nil
}

// startDualStackProxy runs the proxy in the node namespace against the
// object server, reached through a relay listening inside the namespace.
// stop ends it; calling it again does nothing.
func startDualStackProxy(t *testing.T, tp *topology, mode string, api *objectServer, clusterCIDR string) (*lockedBuffer, func()) {
	t.Helper()
	bin, err := framework.Binary("trireme-proxy")
	if err != nil {
		t.Fatal(err)
	}
	addr := relay(t, tp.node, api.addr)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://%s"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &lockedBuffer{}
	proc, err := framework.StartProcess("ip", []string{"netns", "exec", tp.node, bin,
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
