package v1alpha1

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDefaults(t *testing.T) {
	c := &ClusterConfiguration{}
	SetDefaultsClusterConfiguration(c)
	if c.APIVersion != APIVersion || c.Kind != KindClusterConfiguration {
		t.Errorf("type meta = %v", c.TypeMeta)
	}
	if c.CertificatesDir != "/etc/trireme/pki" || c.Networking.ServiceSubnet != "10.96.0.0/12" ||
		c.Networking.PodSubnet != "10.244.0.0/16" || c.Networking.DNSDomain != "cluster.local" ||
		c.Etcd.Local == nil || c.Etcd.Local.DataDir != "/var/lib/trireme/etcd" || c.ImageRepository != "trireme.dev" {
		t.Errorf("defaults = %+v", c)
	}
	if errs := ValidateClusterConfiguration(c); len(errs) != 0 {
		t.Errorf("defaulted ClusterConfiguration invalid: %v", errs)
	}
	if sn := c.Etcd.Local.Snapshots; sn.Interval.Duration != 12*time.Hour || *sn.Retention != 5 || sn.Dir != "/var/lib/trireme/etcd-snapshots" {
		t.Errorf("etcd snapshot defaults = %v %d %s", sn.Interval, *sn.Retention, sn.Dir)
	}
	ext := &ClusterConfiguration{Etcd: Etcd{External: &ExternalEtcd{Endpoints: []string{"https://10.0.0.1:2379"}}}}
	SetDefaultsClusterConfiguration(ext)
	if ext.Etcd.Local != nil {
		t.Errorf("external etcd got a local member too")
	}

	i := &InitConfiguration{}
	SetDefaultsInitConfiguration(i)
	if len(i.BootstrapTokens) != 1 || i.BootstrapTokens[0].TTL.Duration != 24*time.Hour ||
		len(i.BootstrapTokens[0].Usages) != 2 || i.LocalAPIEndpoint.BindPort != 6443 ||
		i.NodeRegistration.CRISocket != DefaultCRISocket {
		t.Errorf("init defaults = %+v", i)
	}
	if errs := ValidateInitConfiguration(i); len(errs) != 0 {
		t.Errorf("defaulted InitConfiguration invalid: %v", errs)
	}
	// An explicit empty token list stays empty.
	none := &InitConfiguration{BootstrapTokens: []BootstrapToken{}}
	SetDefaultsInitConfiguration(none)
	if len(none.BootstrapTokens) != 0 {
		t.Errorf("explicit empty token list was filled")
	}

	j := &JoinConfiguration{Discovery: Discovery{BootstrapToken: &BootstrapTokenDiscovery{Token: "abcdef.0123456789abcdef"}}}
	SetDefaultsJoinConfiguration(j)
	if j.Discovery.TLSBootstrapToken != "abcdef.0123456789abcdef" || j.Discovery.Timeout.Duration != 5*time.Minute || j.CACertPath != DefaultCACertPath {
		t.Errorf("join defaults = %+v", j)
	}
}

func TestValidateClusterConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ClusterConfiguration)
		want   []string // field paths with errors
	}{
		{"defaults", func(*ClusterConfiguration) {}, nil},
		{"endpoint with port", func(c *ClusterConfiguration) { c.ControlPlaneEndpoint = "cp.example.com:6443" }, nil},
		{"endpoint without port", func(c *ClusterConfiguration) { c.ControlPlaneEndpoint = "10.0.0.5" }, nil},
		{"bad endpoint", func(c *ClusterConfiguration) { c.ControlPlaneEndpoint = "bad_host:99999" }, []string{"controlPlaneEndpoint"}},
		{"relative pki", func(c *ClusterConfiguration) { c.CertificatesDir = "pki" }, []string{"certificatesDir"}},
		{"bad version", func(c *ClusterConfiguration) { c.KubernetesVersion = "1.37" }, []string{"kubernetesVersion"}},
		{"bad service subnet", func(c *ClusterConfiguration) { c.Networking.ServiceSubnet = "10.96.0.0" }, []string{"networking.serviceSubnet"}},
		{"huge service subnet", func(c *ClusterConfiguration) { c.Networking.ServiceSubnet = "10.0.0.0/8" }, []string{"networking.serviceSubnet"}},
		{"bad pod subnet", func(c *ClusterConfiguration) { c.Networking.PodSubnet = "x" }, []string{"networking.podSubnet"}},
		{"bad domain", func(c *ClusterConfiguration) { c.Networking.DNSDomain = "Cluster_Local" }, []string{"networking.dnsDomain"}},
		{"both etcds", func(c *ClusterConfiguration) {
			c.Etcd.External = &ExternalEtcd{Endpoints: []string{"https://a:2379"}}
		}, []string{"etcd"}},
		{"external without endpoints", func(c *ClusterConfiguration) {
			c.Etcd = Etcd{External: &ExternalEtcd{CertFile: "/c"}}
		}, []string{"etcd.external.endpoints", "etcd.external"}},
		{"external bad url", func(c *ClusterConfiguration) {
			c.Etcd = Etcd{External: &ExternalEtcd{Endpoints: []string{"10.0.0.1:2379"}}}
		}, []string{"etcd.external.endpoints[0]"}},
		{"bad extra arg", func(c *ClusterConfiguration) {
			c.APIServer.ExtraArgs = []Arg{{Name: "--v", Value: "2"}}
		}, []string{"apiServer.extraArgs[0].name"}},
		{"bad SAN", func(c *ClusterConfiguration) { c.APIServer.CertSANs = []string{"ok.example", "not ok"} }, []string{"apiServer.certSANs[1]"}},
		{"wildcard SAN", func(c *ClusterConfiguration) { c.APIServer.CertSANs = []string{"*.example.com", "::1"} }, nil},
		{"bad kind", func(c *ClusterConfiguration) { c.Kind = "InitConfiguration" }, []string{"kind"}},
		{"virtual IP", func(c *ClusterConfiguration) {
			c.ControlPlaneEndpoint, c.VirtualIP = "10.0.0.100:6443", &VirtualIP{}
		}, nil},
		{"virtual IP of a DNS name", func(c *ClusterConfiguration) {
			c.ControlPlaneEndpoint, c.VirtualIP = "cp.example.com", &VirtualIP{Interface: "eth0"}
		}, []string{"virtualIP"}},
		{"virtual IP without endpoint", func(c *ClusterConfiguration) { c.VirtualIP = &VirtualIP{} }, []string{"virtualIP"}},
		{"external cloud provider", func(c *ClusterConfiguration) {
			c.CloudProvider, c.CloudControllerManager.CloudConfig = "external", "/etc/cloud.yaml"
		}, nil},
		{"external cloud provider, relative cloud config", func(c *ClusterConfiguration) {
			c.CloudProvider, c.CloudControllerManager.CloudConfig = "external", "cloud.yaml"
		}, []string{"cloudControllerManager.cloudConfig"}},
		{"unknown cloud provider", func(c *ClusterConfiguration) { c.CloudProvider = "aws" }, []string{"cloudProvider"}},
		{"snapshots off", func(c *ClusterConfiguration) { c.Etcd.Local.Snapshots.Interval.Duration = 0 }, nil},
		{"snapshots every hour", func(c *ClusterConfiguration) { c.Etcd.Local.Snapshots.Interval.Duration = time.Hour }, nil},
		{"snapshot interval too short", func(c *ClusterConfiguration) { c.Etcd.Local.Snapshots.Interval.Duration = 12 }, []string{"etcd.local.snapshots.interval"}},
		{"snapshot retention 0", func(c *ClusterConfiguration) { *c.Etcd.Local.Snapshots.Retention = 0 }, []string{"etcd.local.snapshots.retention"}},
		{"relative snapshot dir", func(c *ClusterConfiguration) { c.Etcd.Local.Snapshots.Dir = "snaps" }, []string{"etcd.local.snapshots.dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &ClusterConfiguration{}
			SetDefaultsClusterConfiguration(c)
			tt.mutate(c)
			checkPaths(t, pathsOf(ValidateClusterConfiguration(c)), tt.want)
		})
	}
}

func TestValidateInitAndJoin(t *testing.T) {
	hash := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name string
		init *InitConfiguration
		join *JoinConfiguration
		want []string
	}{
		{name: "init ok", init: &InitConfiguration{BootstrapTokens: []BootstrapToken{{Token: "abcdef.0123456789abcdef"}}, LocalAPIEndpoint: APIEndpoint{AdvertiseAddress: "10.0.0.2"}}},
		{name: "init bad token", init: &InitConfiguration{BootstrapTokens: []BootstrapToken{{Token: "ABCDEF.0123456789abcdef"}}}, want: []string{"bootstrapTokens[0].token"}},
		{name: "init bad usage and group", init: &InitConfiguration{BootstrapTokens: []BootstrapToken{{Usages: []string{"x"}, Groups: []string{"system:masters"}}}},
			want: []string{"bootstrapTokens[0].usages[0]", "bootstrapTokens[0].groups[0]"}},
		{name: "init negative ttl", init: &InitConfiguration{BootstrapTokens: []BootstrapToken{{TTL: &metav1.Duration{Duration: -time.Second}}}}, want: []string{"bootstrapTokens[0].ttl"}},
		{name: "init bad address and port", init: &InitConfiguration{LocalAPIEndpoint: APIEndpoint{AdvertiseAddress: "host", BindPort: 70000}},
			want: []string{"localAPIEndpoint.advertiseAddress", "localAPIEndpoint.bindPort"}},
		{name: "init bad node", init: &InitConfiguration{NodeRegistration: NodeRegistrationOptions{Name: "Node_1", CRISocket: "/run/c.sock",
			Taints: []Taint{{Key: "a", Effect: "Sometimes"}}}},
			want: []string{"nodeRegistration.name", "nodeRegistration.criSocket", "nodeRegistration.taints[0].effect"}},
		{name: "join ok", join: &JoinConfiguration{Discovery: Discovery{BootstrapToken: &BootstrapTokenDiscovery{
			Token: "abcdef.0123456789abcdef", APIServerEndpoint: "10.0.0.2:6443", CACertHashes: []string{hash}}}}},
		{name: "join no discovery", join: &JoinConfiguration{}, want: []string{"discovery.bootstrapToken"}},
		{name: "join unpinned", join: &JoinConfiguration{Discovery: Discovery{BootstrapToken: &BootstrapTokenDiscovery{
			Token: "abcdef.0123456789abcdef", APIServerEndpoint: "10.0.0.2"}}},
			want: []string{"discovery.bootstrapToken.apiServerEndpoint", "discovery.bootstrapToken.caCertHashes"}},
		{name: "join bad hash", join: &JoinConfiguration{Discovery: Discovery{BootstrapToken: &BootstrapTokenDiscovery{
			Token: "abcdef.0123456789abcdef", APIServerEndpoint: "h:1", CACertHashes: []string{"md5:00"}}}},
			want: []string{"discovery.bootstrapToken.caCertHashes[0]"}},
		{name: "init bad certificate key", init: &InitConfiguration{CertificateKey: "abc"}, want: []string{"certificateKey"}},
		{name: "join control plane ok", join: &JoinConfiguration{ControlPlane: &JoinControlPlane{CertificateKey: strings.Repeat("0f", 32)},
			Discovery: Discovery{BootstrapToken: &BootstrapTokenDiscovery{Token: "abcdef.0123456789abcdef", APIServerEndpoint: "h:1", CACertHashes: []string{hash}}}}},
		{name: "join control plane without key", join: &JoinConfiguration{ControlPlane: &JoinControlPlane{LocalAPIEndpoint: APIEndpoint{AdvertiseAddress: "x"}},
			Discovery: Discovery{BootstrapToken: &BootstrapTokenDiscovery{Token: "abcdef.0123456789abcdef", APIServerEndpoint: "h:1", CACertHashes: []string{hash}}}},
			want: []string{"controlPlane.localAPIEndpoint.advertiseAddress", "controlPlane.certificateKey"}},
		{name: "join unsafe", join: &JoinConfiguration{Discovery: Discovery{BootstrapToken: &BootstrapTokenDiscovery{
			Token: "abcdef.0123456789abcdef", APIServerEndpoint: "h:1", UnsafeSkipCAVerification: true}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if tt.init != nil {
				SetDefaultsInitConfiguration(tt.init)
				got = pathsOf(ValidateInitConfiguration(tt.init))
			} else {
				SetDefaultsJoinConfiguration(tt.join)
				got = pathsOf(ValidateJoinConfiguration(tt.join))
			}
			checkPaths(t, got, tt.want)
		})
	}
}

func pathsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func checkPaths(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("error fields = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("error fields = %q, want %q", got, want)
		}
	}
}

func TestDefaultCloudConfig(t *testing.T) {
	c := &ClusterConfiguration{CloudProvider: CloudProviderExternal}
	SetDefaultsClusterConfiguration(c)
	if c.CloudControllerManager.CloudConfig != DefaultCloudConfig {
		t.Errorf("cloudConfig %q, want %q", c.CloudControllerManager.CloudConfig, DefaultCloudConfig)
	}
	none := &ClusterConfiguration{}
	SetDefaultsClusterConfiguration(none)
	if none.CloudControllerManager.CloudConfig != "" {
		t.Errorf("cloudConfig %q without a cloud provider, want none", none.CloudControllerManager.CloudConfig)
	}
}
