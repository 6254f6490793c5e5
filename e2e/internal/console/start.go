package console

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
)

// Start runs the built trireme-dashboard against the apiserver kubeconfig
// names (only its server and CA are used) and returns its URL once it is
// ready; it is stopped by PID when the test ends.
func Start(t *testing.T, kubeconfig string) string {
	t.Helper()
	bin, err := testcluster.Binary("trireme-dashboard")
	if err != nil {
		t.Fatal(err)
	}
	port := freeport.For(t)
	var out bytes.Buffer
	p, err := testcluster.StartProcess(bin, []string{"--kubeconfig", kubeconfig, "--secure-port", fmt.Sprint(port), "--bind-address", "127.0.0.1", "-v", "2"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("trireme-dashboard log:\n%s", out.String())
		}
	})
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if r, err := c.Get(base + "/readyz"); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("trireme-dashboard not ready after 30s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Token makes a ServiceAccount bound to clusterRole and returns a token
// for it, as `kubectl create token` would.
func Token(t *testing.T, cs kubernetes.Interface, ns, name, clusterRole string) string {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
