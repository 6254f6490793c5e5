package proxy

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, kubeletPort int32, addrs ...corev1.NodeAddress) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Addresses = addrs
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = kubeletPort
	return n
}

func addr(t corev1.NodeAddressType, a string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: t, Address: a}
}

// transportName labels a RoundTripper so tests can tell which one was picked.
type transportName string

func (transportName) RoundTrip(*http.Request) (*http.Response, error) { panic("not used") }

func TestLocateNode(t *testing.T) {
	nodes := newObjects("nodes",
		node("n1", 10250, addr(corev1.NodeHostName, "n1"), addr(corev1.NodeExternalIP, "203.0.113.1"), addr(corev1.NodeInternalIP, "10.1.0.1")),
		node("n2", 0, addr(corev1.NodeExternalIP, "203.0.113.2")),
		node("n3", 11250, addr(corev1.NodeHostName, "n3.example")),
		node("loop", 0, addr(corev1.NodeInternalIP, "127.0.0.1")),
		node("badname", 0, addr(corev1.NodeHostName, "evil.example")),
		node("lost", 0, addr(corev1.NodeHostName, "lost.example")),
		node("none", 0),
	)
	cfg := NodeStoreConfig{
		Kubelet:          NewKubeletConfig(),
		KubeletTransport: transportName("kubelet"),
		OtherTransport:   transportName("other"),
		Resolver:         hosts{"n3.example": {"10.1.0.3"}, "evil.example": {"10.1.0.4", "127.0.0.1"}},
	}
	tests := []struct {
		name, id      string
		want          string
		wantTransport transportName
		wantCode      int32
	}{
		{name: "InternalIP preferred", id: "n1", want: "https://10.1.0.1:10250", wantTransport: "kubelet"},
		{name: "kubelet port named explicitly", id: "n1:10250", want: "https://10.1.0.1:10250", wantTransport: "kubelet"},
		{name: "kubelet port keeps https", id: "http:n1:10250", want: "https://10.1.0.1:10250", wantTransport: "kubelet"},
		{name: "other port", id: "n1:9100", want: "//10.1.0.1:9100", wantTransport: "other"},
		{name: "other port with scheme", id: "https:n1:9100", want: "https://10.1.0.1:9100", wantTransport: "other"},
		{name: "ExternalIP fallback and default port", id: "n2", want: "https://203.0.113.2:10250", wantTransport: "kubelet"},
		{name: "hostname fallback and daemon endpoint port", id: "n3", want: "https://n3.example:11250", wantTransport: "kubelet"},
		{name: "named port refused", id: "n1:metrics", wantCode: 400},
		{name: "loopback address refused", id: "loop", wantCode: 400},
		{name: "hostname resolving to loopback refused", id: "badname", wantCode: 400},
		{name: "unresolvable hostname", id: "lost", wantCode: 503},
		{name: "node without addresses", id: "none", wantCode: 503},
		{name: "missing node", id: "ghost", wantCode: 404},
		{name: "bad id", id: "ftp:n1:1", wantCode: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := locateNode(context.Background(), nodes, cfg, tt.id)
			if tt.wantCode != 0 {
				if code := statusCode(err); code != tt.wantCode {
					t.Fatalf("locateNode(%q) error = %v (code %d), want code %d", tt.id, err, code, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("locateNode(%q): %v", tt.id, err)
			}
			if got.URL.String() != tt.want || got.Transport != tt.wantTransport {
				t.Fatalf("locateNode(%q) = %q via %v, want %q via %v", tt.id, got.URL, got.Transport, tt.want, tt.wantTransport)
			}
		})
	}
}

func TestNodeAddressPreference(t *testing.T) {
	n := node("n", 0, addr(corev1.NodeInternalIP, "10.1.0.1"), addr(corev1.NodeHostName, "n.example"))
	got, err := nodeAddress(n, []string{"Hostname", "InternalIP"})
	if err != nil || got != "n.example" {
		t.Fatalf("nodeAddress with Hostname first = %q, %v; want n.example", got, err)
	}
}
