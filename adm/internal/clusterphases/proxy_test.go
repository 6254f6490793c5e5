package clusterphases

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestProxyAddon(t *testing.T) {
	in := ProxyInputs{Image: "trireme.dev/trireme-proxy:v1", Server: "https://10.0.0.2:6443", ClusterCIDR: "10.244.0.0/16", Mode: "nftables"}
	c := fake.NewSimpleClientset()
	for i := 0; i < 2; i++ { // the second run updates what the first created
		if err := ProxyAddon(context.Background(), c, in); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	ctx := context.Background()
	ds, err := c.AppsV1().DaemonSets("kube-system").Get(ctx, ProxyName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := ds.Spec.Template.Spec
	ctr := spec.Containers[0]
	tests := []struct {
		name string
		ok   bool
	}{
		{"host network", spec.HostNetwork},
		{"privileged", ctr.SecurityContext != nil && ctr.SecurityContext.Privileged != nil && *ctr.SecurityContext.Privileged},
		{"image", ctr.Image == in.Image},
		{"kubeconfig flag", strings.Contains(strings.Join(ctr.Command, " "), "--kubeconfig=/var/lib/kube-proxy/kubeconfig.conf")},
		{"tolerates everything", len(spec.Tolerations) == 1 && spec.Tolerations[0].Operator == "Exists"},
		{"service account", spec.ServiceAccountName == ProxyName},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Errorf("daemonset: %s wrong: %+v", tt.name, spec)
		}
	}
	cm, err := c.CoreV1().ConfigMaps("kube-system").Get(ctx, ProxyName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"config.conf": "mode: nftables", "kubeconfig.conf": "server: https://10.0.0.2:6443"} {
		if !strings.Contains(cm.Data[key], want) {
			t.Errorf("configmap %s lacks %q:\n%s", key, want, cm.Data[key])
		}
	}
	b, err := c.RbacV1().ClusterRoleBindings().Get(ctx, "kubeadm:node-proxier", metav1.GetOptions{})
	if err != nil || b.RoleRef.Name != "system:node-proxier" || b.Subjects[0].Name != ProxyName {
		t.Errorf("binding %+v, %v", b, err)
	}
}
