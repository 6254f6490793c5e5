package clusterphases

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	"trireme.dev/api/config/v1alpha1"
)

func TestPhasesObjects(t *testing.T) {
	ctx := context.Background()
	c := fake.NewSimpleClientset()
	cluster := &v1alpha1.ClusterConfiguration{}
	v1alpha1.SetDefaultsClusterConfiguration(cluster)
	// Each runs twice: the second run updates what the first created.
	for range 2 {
		if err := EnsureAdminBinding(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := UploadConfig(ctx, c, cluster); err != nil {
			t.Fatal(err)
		}
		if err := BootstrapRBAC(ctx, c, []string{v1alpha1.DefaultNodeBootstrapGroup}); err != nil {
			t.Fatal(err)
		}
		if err := ClusterInfo(ctx, c, "trireme", "https://10.0.0.2:6443", []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")); err != nil {
			t.Fatal(err)
		}
	}
	crb, err := c.RbacV1().ClusterRoleBindings().Get(ctx, ClusterAdminsBinding, metav1.GetOptions{})
	if err != nil || crb.RoleRef.Name != "cluster-admin" || crb.Subjects[0].Name != "kubeadm:cluster-admins" {
		t.Errorf("admin binding %+v %v", crb, err)
	}
	for name, role := range map[string]string{NodeBootstrapperBinding: "system:node-bootstrapper",
		AutoApproveBinding:        "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
		AutoApproveRenewalBinding: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", GetNodesRole: GetNodesRole} {
		b, err := c.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		if err != nil || b.RoleRef.Name != role {
			t.Errorf("binding %s: %+v %v", name, b, err)
		}
	}
	cm, err := c.CoreV1().ConfigMaps("kube-system").Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data[ConfigMapKey], "kind: ClusterConfiguration") {
		t.Errorf("uploaded config %+v %v", cm, err)
	}
	info, err := c.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load([]byte(info.Data["kubeconfig"]))
	if err != nil || kc.Clusters[""] == nil || kc.Clusters[""].Server != "https://10.0.0.2:6443" || len(kc.AuthInfos) != 0 {
		t.Errorf("cluster-info kubeconfig %+v %v", kc, err)
	}
	rb, err := c.RbacV1().RoleBindings("kube-public").Get(ctx, ClusterInfoRole, metav1.GetOptions{})
	if err != nil || rb.Subjects[0].Name != "system:anonymous" {
		t.Errorf("cluster-info binding %+v %v", rb, err)
	}
}

func TestMarkControlPlane(t *testing.T) {
	ctx := context.Background()
	c := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cp-1"}})
	taint := corev1.Taint{Key: ControlPlaneLabel, Effect: corev1.TaintEffectNoSchedule}
	for range 2 {
		if err := MarkControlPlane(ctx, c, "cp-1", []corev1.Taint{taint}, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "cp-1", metav1.GetOptions{})
	if _, ok := n.Labels[ControlPlaneLabel]; !ok || len(n.Spec.Taints) != 1 {
		t.Errorf("node %+v", n)
	}
	if err := MarkControlPlane(ctx, c, "missing", nil, 600*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not register") {
		t.Errorf("missing node: %v", err)
	}
}

func TestWaitHealthy(t *testing.T) {
	ok := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer ok.Close()
	bad := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	defer bad.Close()
	ca := ok.Certificate()
	if err := WaitHealthy(context.Background(), []Endpoint{{Name: "ok", URL: ok.URL, CA: ca}, {Name: "self-signed", URL: ok.URL}}, 5*time.Second, nil); err != nil {
		t.Errorf("healthy endpoints: %v", err)
	}
	var seen []string
	err := WaitHealthy(context.Background(), []Endpoint{{Name: "ok", URL: ok.URL}, {Name: "bad", URL: bad.URL}}, 1500*time.Millisecond,
		func(w []string) { seen = w })
	if err == nil || !strings.Contains(err.Error(), "bad") || strings.Join(seen, ",") != "bad" {
		t.Errorf("err %v, last progress %v", err, seen)
	}
	// A CA that did not sign the server's certificate fails verification.
	if err := WaitHealthy(context.Background(), []Endpoint{{Name: "wrong-ca", URL: ok.URL, CA: &x509.Certificate{}}}, time.Second, nil); err == nil {
		t.Error("verification with the wrong CA passed")
	}
}

func TestCloudControllerManagerRBAC(t *testing.T) {
	ctx := context.Background()
	c := fake.NewSimpleClientset()
	for range 2 {
		if err := CloudControllerManagerRBAC(ctx, c, "system:cloud-controller-manager"); err != nil {
			t.Fatal(err)
		}
	}
	for name, role := range map[string]string{CloudControllerManagerRole: CloudControllerManagerRole,
		"triremeadm:cloud-controller-manager:auth-delegator": "system:auth-delegator"} {
		b, err := c.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		if err != nil || b.RoleRef.Name != role || b.Subjects[0].Name != "system:cloud-controller-manager" {
			t.Errorf("binding %s: %+v %v", name, b, err)
		}
	}
	r, err := c.RbacV1().ClusterRoles().Get(ctx, CloudControllerManagerRole, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pools bool
	for _, rule := range r.Rules {
		pools = pools || slices.Contains(rule.Resources, "addresspools/status")
	}
	if !pools {
		t.Errorf("the role cannot write AddressPools' status: %+v", r.Rules)
	}
	if _, err := c.RbacV1().RoleBindings("kube-system").Get(ctx, "triremeadm:cloud-controller-manager:authentication-reader", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

func TestCreateOrUpdate(t *testing.T) {
	existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "kube-system"}, Data: map[string]string{"k": "1"}}
	tests := []struct {
		name string
		cm   *corev1.ConfigMap
	}{
		{"created when absent", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "kube-system"}, Data: map[string]string{"k": "2"}}},
		{"replaced when present", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "kube-system"}, Data: map[string]string{"k": "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset(existing.DeepCopy())
			if err := applyConfigMap(context.Background(), c, tt.cm); err != nil {
				t.Fatal(err)
			}
			got, err := c.CoreV1().ConfigMaps("kube-system").Get(context.Background(), tt.cm.Name, metav1.GetOptions{})
			if err != nil || got.Data["k"] != "2" {
				t.Fatalf("got %v, %v; want data k=2", got, err)
			}
		})
	}
}
