package flannelcni

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func TestParseSubnetFile(t *testing.T) {
	tests := []struct {
		name, in string
		want     Subnet
		err      string
	}{
		{
			name: "flanneld's file",
			in:   "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n",
			want: Subnet{Network: netip.MustParsePrefix("10.244.0.0/16"), Subnet: netip.MustParsePrefix("10.244.1.0/24"), MTU: 1450},
		},
		{
			name: "quotes, comments and blank lines",
			in:   "# flannel\n\nFLANNEL_SUBNET=\"10.1.2.1/24\"\n FLANNEL_MTU = '1500'\n",
			want: Subnet{Subnet: netip.MustParsePrefix("10.1.2.0/24"), MTU: 1500},
		},
		{
			name: "IPv6",
			in:   "FLANNEL_SUBNET=fd00:10:244:1::1/64\nFLANNEL_MTU=1430\n",
			want: Subnet{Subnet: netip.MustParsePrefix("fd00:10:244:1::/64"), MTU: 1430},
		},
		{name: "empty", in: "", err: "no FLANNEL_SUBNET"},
		{name: "no MTU", in: "FLANNEL_SUBNET=10.244.1.1/24\n", err: "no FLANNEL_MTU"},
		{name: "not KEY=VALUE", in: "FLANNEL_SUBNET\n", err: "line 1"},
		{name: "bad subnet", in: "FLANNEL_SUBNET=10.244.1.1\nFLANNEL_MTU=1450\n", err: "FLANNEL_SUBNET"},
		{name: "bad MTU", in: "FLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=big\n", err: "FLANNEL_MTU"},
		{name: "MTU too small", in: "FLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=0\n", err: "out of range"},
		{name: "MTU too large", in: "FLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=70000\n", err: "out of range"},
		{
			name: "subnet outside the network",
			in:   "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.245.1.1/24\nFLANNEL_MTU=1450\n",
			err:  "not inside",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSubnetFile([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseSubnetFile(f *testing.F) {
	f.Add("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n")
	f.Add("FLANNEL_SUBNET=fd00::1/64\nFLANNEL_MTU=1430")
	f.Add("FLANNEL_SUBNET=\nFLANNEL_MTU=-1\n=\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSubnetFile([]byte(in))
		if err != nil {
			return
		}
		// Whatever parses makes a configuration that is valid JSON.
		if s.Subnet != s.Subnet.Masked() || s.MTU < 68 || s.MTU > 65535 {
			t.Fatalf("parsed %+v from %q", s, in)
		}
		b, err := Conflist(Network{Name: "n", Bridge: "b", DataDir: "/d"}, s)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON %s", b)
		}
	})
}

var testNetwork = Network{Name: "trireme", Bridge: "trireme0", DataDir: "/var/lib/cni/networks/trireme"}

func TestConflist(t *testing.T) {
	tests := []struct {
		name      string
		network   Network
		subnet    Subnet
		wantRoute string
		err       string
	}{
		{name: "IPv4", network: testNetwork, subnet: Subnet{Subnet: netip.MustParsePrefix("10.244.1.0/24"), MTU: 1450}, wantRoute: "0.0.0.0/0"},
		{name: "IPv6", network: testNetwork, subnet: Subnet{Subnet: netip.MustParsePrefix("fd00::/64"), MTU: 1430}, wantRoute: "::/0"},
		{name: "no bridge", network: Network{Name: "x", DataDir: "/d"}, subnet: Subnet{Subnet: netip.MustParsePrefix("10.244.1.0/24"), MTU: 1450}, err: "required"},
		{name: "no subnet", network: testNetwork, subnet: Subnet{MTU: 1450}, err: "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Conflist(tt.network, tt.subnet)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var conf struct {
				Name    string `json:"name"`
				Plugins []struct {
					Type   string `json:"type"`
					Bridge string `json:"bridge"`
					IPMasq *bool  `json:"ipMasq"`
					MTU    int    `json:"mtu"`
					IPAM   struct {
						Type    string                `json:"type"`
						DataDir string                `json:"dataDir"`
						Ranges  [][]map[string]string `json:"ranges"`
						Routes  []map[string]string   `json:"routes"`
					} `json:"ipam"`
				} `json:"plugins"`
			}
			if err := json.Unmarshal(b, &conf); err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			if conf.Name != tt.network.Name || len(conf.Plugins) != 2 || conf.Plugins[1].Type != "portmap" {
				t.Fatalf("conflist %s", b)
			}
			br := conf.Plugins[0]
			if br.Type != "bridge" || br.Bridge != tt.network.Bridge || br.IPMasq == nil || *br.IPMasq || br.MTU != tt.subnet.MTU {
				t.Errorf("bridge plugin %+v", br)
			}
			if br.IPAM.Type != "host-local" || br.IPAM.DataDir != tt.network.DataDir ||
				len(br.IPAM.Ranges) != 1 || br.IPAM.Ranges[0][0]["subnet"] != tt.subnet.Subnet.String() ||
				len(br.IPAM.Routes) != 1 || br.IPAM.Routes[0]["dst"] != tt.wantRoute {
				t.Errorf("ipam %+v", br.IPAM)
			}
		})
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	o := Options{
		SubnetFile: filepath.Join(dir, "run/flannel/subnet.env"),
		ConfFile:   filepath.Join(dir, "etc/cni/net.d/05-flannel.conflist"),
		Network:    testNetwork,
		Interval:   10 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, logr.Discard(), o) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(30 * time.Millisecond)
	if err := Check(o.ConfFile); err == nil {
		t.Fatal("conflist written before the subnet file")
	}
	write := func(mtu string) {
		t.Helper()
		if err := WriteFileAtomic(o.SubnetFile, []byte("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU="+mtu+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hasMTU := func(mtu string) func() bool {
		return func() bool {
			b, err := os.ReadFile(o.ConfFile)
			return err == nil && strings.Contains(string(b), `"mtu": `+mtu+",")
		}
	}
	write("1450")
	waitFor("the conflist", hasMTU("1450"))
	if err := Check(o.ConfFile); err != nil {
		t.Fatal(err)
	}
	write("1400")
	waitFor("the conflist with the new MTU", hasMTU("1400"))
	if err := os.Remove(o.ConfFile); err != nil {
		t.Fatal(err)
	}
	waitFor("the removed conflist rewritten", hasMTU("1400"))
	entries, err := os.ReadDir(filepath.Dir(o.ConfFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("conf dir holds %d files, want only the conflist (no temporary files)", len(entries))
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, content, err string }{
		{name: "conflist", content: `{"name":"trireme","plugins":[{"type":"bridge"}]}`},
		{name: "no plugins", content: `{"name":"trireme","plugins":[]}`, err: "no network name or plugins"},
		{name: "not JSON", content: `{`, err: "unexpected end"},
		{name: "missing", err: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if tt.content != "" {
				if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := Check(path)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Check: %v, want error containing %q", err, tt.err)
			}
		})
	}
}

func TestCheckNodes(t *testing.T) {
	good := func(name, cidr, backend string) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
				AnnotationPrefix + "/backend-type": backend, AnnotationPrefix + "/public-ip": "10.0.0.1"}},
			Spec:   corev1.NodeSpec{PodCIDR: cidr},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse}}},
		}
	}
	noCIDR := good("b", "", "vxlan")
	noAnnotation := good("c", "10.244.2.0/24", "vxlan")
	delete(noAnnotation.Annotations, AnnotationPrefix+"/public-ip")
	down := good("d", "10.244.3.0/24", "vxlan")
	down.Status.Conditions[0].Status = corev1.ConditionTrue
	tests := []struct {
		name    string
		nodes   []runtime.Object
		failing string // the healthz URL that fails
		err     []string
		urls    []string
	}{
		{name: "vxlan nodes", nodes: []runtime.Object{good("a", "10.244.0.0/24", "vxlan"), good("b", "10.244.1.0/24", "vxlan")},
			urls: []string{"http://10.244.0.0:8471/healthz", "http://10.244.1.0:8471/healthz"}},
		{name: "host-gw nodes are not dialled", nodes: []runtime.Object{good("a", "10.244.0.0/24", "host-gw")}},
		{name: "no nodes", err: []string{"no nodes"}},
		{name: "broken nodes", nodes: []runtime.Object{good("a", "10.244.0.0/24", "vxlan"), noCIDR, noAnnotation, down},
			err:  []string{"node b: no spec.podCIDR", "node c: no flannel.alpha.coreos.com/backend-type or public-ip", "node d: condition NetworkUnavailable"},
			urls: []string{"http://10.244.0.0:8471/healthz"}},
		{name: "overlay unreachable", nodes: []runtime.Object{good("a", "10.244.0.0/24", "vxlan")}, failing: "http://10.244.0.0:8471/healthz",
			err: []string{"node a: flanneld through the overlay: timeout"}, urls: []string{"http://10.244.0.0:8471/healthz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var urls []string
			get := func(_ context.Context, url string) error {
				urls = append(urls, url)
				if url == tt.failing {
					return errors.New("timeout")
				}
				return nil
			}
			err := CheckNodes(context.Background(), fake.NewClientset(tt.nodes...), 8471, get)
			if len(tt.err) == 0 && err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.err {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one containing %q", err, want)
				}
			}
			if !slices.Equal(urls, tt.urls) {
				t.Errorf("got %v, want %v", urls, tt.urls)
			}
		})
	}
}
