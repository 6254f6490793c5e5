package options

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func testEnv() Environment {
	return Environment{
		Hostname:          func() (string, error) { return "Host-A", nil },
		DefaultAddress:    func() (net.IP, error) { return net.ParseIP("192.168.7.7"), nil },
		DefaultK8sVersion: "v1.37.0-test",
	}
}

func TestResolve(t *testing.T) {
	file := `apiVersion: triremeadm.config.trireme.dev/v1alpha1
kind: InitConfiguration
nodeRegistration:
  name: from-file
localAPIEndpoint:
  bindPort: 7443
---
apiVersion: triremeadm.config.trireme.dev/v1alpha1
kind: ClusterConfiguration
networking:
  podSubnet: 10.50.0.0/16
  serviceSubnet: 10.200.0.0/16
controlPlaneEndpoint: cp.example.com
`
	tests := []struct {
		name    string
		file    string
		args    []string
		check   func(t *testing.T, c *Config)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, c *Config) {
			if c.NodeName() != "host-a" || c.Init.LocalAPIEndpoint.AdvertiseAddress != "192.168.7.7" || c.Cluster.KubernetesVersion != "v1.37.0-test" {
				t.Errorf("dynamic defaults: %s %s %s", c.NodeName(), c.Init.LocalAPIEndpoint.AdvertiseAddress, c.Cluster.KubernetesVersion)
			}
			if c.LocalURL() != "https://192.168.7.7:6443" || c.ControlPlaneURL() != c.LocalURL() {
				t.Errorf("urls %s %s", c.LocalURL(), c.ControlPlaneURL())
			}
			if c.Image("etcd") != "trireme.dev/etcd:v1.37.0-test" || c.PKIDir() != "/etc/trireme/pki" {
				t.Errorf("image %s pki %s", c.Image("etcd"), c.PKIDir())
			}
		}},
		{name: "etcd snapshots by default", check: func(t *testing.T, c *Config) {
			if sn, ok := c.EtcdSnapshots(); !ok || sn.Interval.Duration != 12*time.Hour || *sn.Retention != 5 {
				t.Errorf("snapshots %v %v", sn, ok)
			}
		}},
		{name: "etcd snapshot flags", args: []string{"--etcd-snapshot-interval=1h", "--etcd-snapshot-retention=2"}, check: func(t *testing.T, c *Config) {
			if sn, ok := c.EtcdSnapshots(); !ok || sn.Interval.Duration != time.Hour || *sn.Retention != 2 {
				t.Errorf("snapshots %v %v", sn, ok)
			}
		}},
		{name: "etcd snapshots off", args: []string{"--etcd-snapshot-interval=0"}, check: func(t *testing.T, c *Config) {
			if _, ok := c.EtcdSnapshots(); ok {
				t.Error("snapshots on")
			}
		}},
		{name: "etcd snapshot interval too short", args: []string{"--etcd-snapshot-interval=10s"}, wantErr: "etcd.local.snapshots.interval"},
		{name: "file", file: file, check: func(t *testing.T, c *Config) {
			if c.NodeName() != "from-file" || c.Cluster.Networking.PodSubnet != "10.50.0.0/16" || c.ControlPlaneURL() != "https://cp.example.com:7443" {
				t.Errorf("file values: %s %s %s", c.NodeName(), c.Cluster.Networking.PodSubnet, c.ControlPlaneURL())
			}
			if c.CertInputs().ControlPlaneEndpointHost != "cp.example.com" {
				t.Errorf("endpoint host %q", c.CertInputs().ControlPlaneEndpointHost)
			}
		}},
		{name: "flags override the file", file: file, args: []string{"--node-name=flag", "--pod-network-cidr=10.60.0.0/16", "--apiserver-bind-port=8443", "--control-plane-endpoint=lb:9443"},
			check: func(t *testing.T, c *Config) {
				if c.NodeName() != "flag" || c.Cluster.Networking.PodSubnet != "10.60.0.0/16" || c.Cluster.Networking.ServiceSubnet != "10.200.0.0/16" ||
					c.Init.LocalAPIEndpoint.BindPort != 8443 || c.ControlPlaneURL() != "https://lb:9443" {
					t.Errorf("merged: %s %s %s %d %s", c.NodeName(), c.Cluster.Networking.PodSubnet, c.Cluster.Networking.ServiceSubnet, c.Init.LocalAPIEndpoint.BindPort, c.ControlPlaneURL())
				}
			}},
		{name: "token flags", args: []string{"--token=abcdef.0123456789abcdef", "--token-ttl=1h"}, check: func(t *testing.T, c *Config) {
			if len(c.Init.BootstrapTokens) != 1 || c.Init.BootstrapTokens[0].Token != "abcdef.0123456789abcdef" || c.Init.BootstrapTokens[0].TTL.Duration.String() != "1h0m0s" {
				t.Errorf("tokens %+v", c.Init.BootstrapTokens)
			}
		}},
		{name: "root dir", args: []string{"--cert-dir=/srv/pki"}, check: func(t *testing.T, c *Config) {
			c.Paths.Root = "/tmp/r"
			if c.PKIDir() != "/tmp/r/srv/pki" || c.Paths.ManifestsDir() != "/tmp/r/etc/trireme/manifests" {
				t.Errorf("rooted paths %s %s", c.PKIDir(), c.Paths.ManifestsDir())
			}
		}},
		{name: "invalid flag value", args: []string{"--service-cidr=nonsense"}, wantErr: "networking.serviceSubnet"},
		{name: "join config rejected", file: "apiVersion: triremeadm.config.trireme.dev/v1alpha1\nkind: JoinConfiguration\n", wantErr: "JoinConfiguration"},
		{name: "unknown field", file: "apiVersion: triremeadm.config.trireme.dev/v1alpha1\nkind: ClusterConfiguration\nbogus: 1\n", wantErr: "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Init{}
			fs := pflag.NewFlagSet("init", pflag.ContinueOnError)
			o.AddFlags(fs)
			args := tt.args
			if tt.file != "" {
				path := filepath.Join(t.TempDir(), "c.yaml")
				os.WriteFile(path, []byte(tt.file), 0o600)
				args = append(args, "--config="+path)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			c, err := o.Resolve(fs, "", testEnv())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
