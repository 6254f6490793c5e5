package staticpod

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/options"
)

func config(t *testing.T, root string) *options.Config {
	t.Helper()
	o := &options.Init{}
	c, err := o.Resolve(nil, root, options.Environment{
		Hostname:          func() (string, error) { return "cp-1", nil },
		DefaultAddress:    func() (net.IP, error) { return net.ParseIP("10.0.0.2"), nil },
		DefaultK8sVersion: "v1.37.0-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestArgs(t *testing.T) {
	got := Args(map[string]string{"b": "1", "a": "2", "v": "0"}, []v1alpha1.Arg{{Name: "v", Value: "4"}, {Name: "z", Value: "x"}, {Name: "z", Value: "y"}})
	want := "--a=2 --b=1 --v=4 --z=x --z=y"
	if strings.Join(got, " ") != want {
		t.Errorf("Args = %v, want %s", got, want)
	}
	if v, ok := Flag(got, "v"); !ok || v != "4" {
		t.Errorf("Flag(v) = %q %v", v, ok)
	}
}

func TestPods(t *testing.T) {
	root := t.TempDir()
	c := config(t, root)
	c.Cluster.APIServer.ExtraArgs = []v1alpha1.Arg{{Name: "authorization-mode", Value: "RBAC"}}
	pki := filepath.Join(root, "etc/trireme/pki")
	tests := []struct {
		component string
		flags     map[string]string
		probe     string
		scheme    corev1.URIScheme
		mounts    []string
	}{
		{Etcd, map[string]string{"name": "cp-1", "initial-cluster": "cp-1=https://10.0.0.2:2380", "client-cert-auth": "true",
			"data-dir": filepath.Join(root, "var/lib/trireme/etcd"), "trusted-ca-file": filepath.Join(pki, "etcd/ca.crt"),
			"listen-client-urls": "https://127.0.0.1:2379,https://10.0.0.2:2379"}, "/livez", corev1.URISchemeHTTP,
			[]string{filepath.Join(root, "var/lib/trireme/etcd"), filepath.Join(pki, "etcd")}},
		{APIServer, map[string]string{"enable-admission-plugins": "NodeRestriction", "authorization-mode": "RBAC",
			"etcd-servers": "https://127.0.0.1:2379", "service-account-signing-key-file": filepath.Join(pki, "sa.key"),
			"tls-cert-file": filepath.Join(pki, "apiserver.crt"), "secure-port": "6443", "advertise-address": "10.0.0.2",
			"enable-bootstrap-token-auth": "true", "service-cluster-ip-range": "10.96.0.0/12",
			"proxy-client-cert-file": filepath.Join(pki, "front-proxy-client.crt"), "proxy-client-key-file": filepath.Join(pki, "front-proxy-client.key"),
			"requestheader-client-ca-file": filepath.Join(pki, "front-proxy-ca.crt"), "requestheader-allowed-names": "front-proxy-client"}, "/livez", corev1.URISchemeHTTPS,
			[]string{"/etc/ssl/certs", pki}},
		{ControllerManager, map[string]string{"allocate-node-cidrs": "true", "cluster-cidr": "10.244.0.0/16",
			"controllers": "*,bootstrapsigner,tokencleaner", "use-service-account-credentials": "true",
			"cluster-signing-key-file": filepath.Join(pki, "ca.key"), "root-ca-file": filepath.Join(pki, "ca.crt"),
			"kubeconfig":                filepath.Join(root, "etc/trireme/controller-manager.conf"),
			"authentication-kubeconfig": filepath.Join(root, "etc/trireme/controller-manager.conf"),
			"authorization-kubeconfig":  filepath.Join(root, "etc/trireme/controller-manager.conf")}, "/healthz", corev1.URISchemeHTTPS,
			[]string{pki, filepath.Join(root, "etc/trireme/controller-manager.conf")}},
		{Scheduler, map[string]string{"kubeconfig": filepath.Join(root, "etc/trireme/scheduler.conf"), "leader-elect": "true"},
			"/livez", corev1.URISchemeHTTPS, []string{filepath.Join(root, "etc/trireme/scheduler.conf")}},
	}
	for _, tt := range tests {
		t.Run(tt.component, func(t *testing.T) {
			path, err := Write(c, tt.component)
			if err != nil {
				t.Fatal(err)
			}
			if path != filepath.Join(root, "etc/trireme/manifests", tt.component+".yaml") {
				t.Errorf("path %s", path)
			}
			pod, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if !pod.Spec.HostNetwork || pod.Namespace != "kube-system" || pod.Spec.PriorityClassName != "system-node-critical" {
				t.Errorf("pod spec basics: %+v", pod.Spec)
			}
			ctr := pod.Spec.Containers[0]
			if ctr.Image != "trireme.dev/"+Images[tt.component].Image+":v1.37.0-test" || ctr.Command[0] != Images[tt.component].Binary {
				t.Errorf("image %s command %s", ctr.Image, ctr.Command[0])
			}
			for k, v := range tt.flags {
				if got, ok := Flag(ctr.Command[1:], k); !ok || got != v {
					t.Errorf("--%s = %q (%v), want %q", k, got, ok, v)
				}
			}
			for _, p := range []*corev1.Probe{ctr.LivenessProbe, ctr.StartupProbe} {
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != tt.probe || p.HTTPGet.Scheme != tt.scheme {
					t.Errorf("probe %+v, want %s %s", p, tt.scheme, tt.probe)
				}
			}
			var mounted []string
			for _, v := range pod.Spec.Volumes {
				mounted = append(mounted, v.HostPath.Path)
			}
			for _, m := range tt.mounts {
				if !strings.Contains(strings.Join(mounted, " "), m) {
					t.Errorf("no hostPath %s in %v", m, mounted)
				}
			}
			if len(ctr.VolumeMounts) != len(pod.Spec.Volumes) {
				t.Errorf("%d mounts for %d volumes", len(ctr.VolumeMounts), len(pod.Spec.Volumes))
			}
		})
	}
	c.Cluster.Etcd = v1alpha1.Etcd{External: &v1alpha1.ExternalEtcd{Endpoints: []string{"https://e1:2379", "https://e2:2379"}, CAFile: "/x/ca.crt"}}
	if _, err := Write(c, Etcd); err == nil {
		t.Error("etcd manifest written for external etcd")
	}
	api, _ := APIServerPod(c)
	if v, _ := Flag(api.Spec.Containers[0].Command, "etcd-servers"); v != "https://e1:2379,https://e2:2379" {
		t.Errorf("external etcd-servers = %q", v)
	}
}

// TestJoiningEtcd: a member joining an existing cluster starts with the
// members etcd listed and initial-cluster-state=existing.
func TestJoiningEtcd(t *testing.T) {
	c := config(t, t.TempDir())
	c.EtcdInitialCluster = "cp-0=https://10.0.0.1:2380,cp-1=https://10.0.0.2:2380"
	pod, err := EtcdPod(c)
	if err != nil {
		t.Fatal(err)
	}
	args := pod.Spec.Containers[0].Command[1:]
	for k, want := range map[string]string{"initial-cluster": c.EtcdInitialCluster, "initial-cluster-state": "existing", "name": "cp-1"} {
		if got, _ := Flag(args, k); got != want {
			t.Errorf("--%s = %q, want %q", k, got, want)
		}
	}
}

func TestVIPManager(t *testing.T) {
	c := config(t, t.TempDir())
	if _, err := VIPManagerPod(c); err == nil {
		t.Error("VIP manager without a virtualIP")
	}
	c.Cluster.ControlPlaneEndpoint = "10.0.0.100:6443"
	c.Cluster.VirtualIP = &v1alpha1.VirtualIP{Interface: "eth1"}
	pod, err := VIPManagerPod(c)
	if err != nil {
		t.Fatal(err)
	}
	ctr := pod.Spec.Containers[0]
	for k, want := range map[string]string{"vip": "10.0.0.100", "interface": "eth1", "node-ip": "10.0.0.2", "id": "cp-1"} {
		if got, _ := Flag(ctr.Command[1:], k); got != want {
			t.Errorf("--%s = %q, want %q", k, got, want)
		}
	}
	if !pod.Spec.HostNetwork || ctr.SecurityContext == nil || ctr.SecurityContext.Privileged == nil || !*ctr.SecurityContext.Privileged {
		t.Errorf("VIP manager is not privileged on the host network: %+v", ctr.SecurityContext)
	}
}

func TestCloudControllerManager(t *testing.T) {
	root := t.TempDir()
	c := config(t, root)
	c.Cluster.CloudProvider = v1alpha1.CloudProviderExternal
	v1alpha1.SetDefaultsClusterConfiguration(c.Cluster)
	pod := CloudControllerManagerPod(c)
	ctr := pod.Spec.Containers[0]
	if ctr.Image != "trireme.dev/trireme-cloud-controller-manager:v1.37.0-test" {
		t.Errorf("image %s", ctr.Image)
	}
	cloudConfig := filepath.Join(root, "etc/trireme/cloud/cloud-config.yaml")
	for k, want := range map[string]string{"cloud-provider": "trireme", "cloud-config": cloudConfig, "leader-elect": "true",
		"secure-port": "10258", "configure-cloud-routes": "false", "kubeconfig": filepath.Join(root, "etc/trireme/cloud-controller-manager.conf")} {
		if got, _ := Flag(ctr.Command[1:], k); got != want {
			t.Errorf("--%s = %q, want %q", k, got, want)
		}
	}
	if p := ctr.LivenessProbe.HTTPGet; p.Port.IntValue() != CloudControllerManagerPort || p.Path != "/healthz" {
		t.Errorf("liveness probe %+v", p)
	}
	var dirMounted bool
	for _, m := range ctr.VolumeMounts {
		dirMounted = dirMounted || m.MountPath == filepath.Dir(cloudConfig)
	}
	if !dirMounted {
		t.Errorf("the cloud config's directory is not mounted (a replaced file would not be seen): %+v", ctr.VolumeMounts)
	}
}

func TestEtcdQuota(t *testing.T) {
	cfg := config(t, "/r")
	for _, tc := range []struct {
		name  string
		extra []v1alpha1.Arg
		want  string
	}{
		{"default 8 GB", nil, "8589934592"},
		{"extraArgs override", []v1alpha1.Arg{{Name: "quota-backend-bytes", Value: "2147483648"}}, "2147483648"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg.Cluster.Etcd.Local.ExtraArgs = tc.extra
			pod, err := EtcdPod(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := Flag(pod.Spec.Containers[0].Command, "quota-backend-bytes"); got != tc.want {
				t.Errorf("--quota-backend-bytes=%s, want %s", got, tc.want)
			}
		})
	}
}
