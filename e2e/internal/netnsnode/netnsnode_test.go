package netnsnode

import (
	"strings"
	"testing"
)

func TestJoinCommand(t *testing.T) {
	tests := []struct {
		name, output, want string
	}{
		{
			name: "worker join of init's output",
			output: `[init] ... ok (2s)
Join worker nodes by running, as root on each:

  triremeadm join 192.0.2.2:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:00ff
`,
			want: "triremeadm join 192.0.2.2:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:00ff",
		},
		{name: "no join command", output: "init failed\n", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JoinCommand(tt.output); got != tt.want {
				t.Errorf("JoinCommand = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKubeletConfig(t *testing.T) {
	tests := []struct {
		name, base, want string
	}{
		{name: "no base", want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupRoot: /w1\n"},
		{name: "base", base: "kind: KubeletConfiguration\nsyncFrequency: 10s\n", want: "kind: KubeletConfiguration\nsyncFrequency: 10s\ncgroupRoot: /w1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(KubeletConfig(tt.base, "/w1")); got != tt.want {
				t.Errorf("KubeletConfig = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFlannelNodePaths(t *testing.T) {
	got, err := FlannelNodePaths([]*Node{{Name: "w1", Root: "/srv/w1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `flannel.nodePaths={"w1":{"cniConfDir":"/srv/w1/etc/cni/net.d","cniDataDir":"/srv/w1/var/lib/cni/networks/trireme","runDir":"/srv/w1/run/flannel"}}`
	if got != want {
		t.Errorf("FlannelNodePaths = %s, want %s", got, want)
	}
}

func TestControlPlaneJoinCommand(t *testing.T) {
	out := `Join more control-plane nodes by running, as root on each:

  triremeadm join 10.214.9.100:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:00ff \
    --control-plane --certificate-key 0a1b

Join worker nodes by running, as root on each:

  triremeadm join 10.214.9.100:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:00ff
`
	want := "join 10.214.9.100:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:00ff --control-plane --certificate-key 0a1b"
	if got := strings.Join(ControlPlaneJoinCommand(out), " "); got != want {
		t.Errorf("ControlPlaneJoinCommand = %q, want %q", got, want)
	}
	if got := ControlPlaneJoinCommand(JoinCommand(out)); got != nil {
		t.Errorf("ControlPlaneJoinCommand of a worker join = %q, want nil", got)
	}
}
