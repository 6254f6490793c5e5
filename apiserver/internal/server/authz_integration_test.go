package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"trireme.dev/apiserver/internal/devpki"
	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testpki"

	"trireme.dev/componentbase/testwait"
)

// testCluster is an in-process dev-mode apiserver.
type testCluster struct {
	dir, server string
	ca          *testpki.CA
}

func startCluster(t *testing.T) *testCluster {
	t.Helper()
	dir := t.TempDir()
	o := NewOptions()
	o.DataDir = dir
	o.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.SecureServing.BindPort = freeport.For(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv, cleanup, err := New(ctx, o, zap.NewNop())
	if err != nil {
		cancel()
		cleanup()
		t.Fatalf("New: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Run(ctx); err != nil {
			t.Logf("server stopped: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cleanup()
	})
	files := devpki.Layout(dir)
	ca, err := testpki.LoadCA(files.CACert, files.CAKey)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{dir: dir, server: fmt.Sprintf("https://127.0.0.1:%d", o.SecureServing.BindPort), ca: ca}
	admin := c.adminClient(t)
	// Ready means the post-start hooks, the RBAC policy's among them, ran.
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		body, err := admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	})
	if err != nil {
		t.Fatalf("server never became ready: %v", err)
	}
	return c
}

// adminClient uses the dev-mode admin.kubeconfig: kubeadm:cluster-admins,
// which only the bootstrap policy makes an admin.
func (c *testCluster) adminClient(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", devpki.Layout(c.dir).AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// userKubeconfig signs a client certificate for name in groups with the
// cluster CA and writes a kubeconfig for it.
func (c *testCluster) userKubeconfig(t *testing.T, name string, groups ...string) string {
	t.Helper()
	user := c.ca.Issue(testpki.Cert{CommonName: name, Organization: groups, Usage: testpki.ClientAuth})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: c.server, CertificateAuthorityData: c.ca.CertPEM}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: user.CertPEM, ClientKeyData: user.KeyPEM}
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	path := filepath.Join(c.dir, strings.ReplaceAll(name, ":", "_")+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func clientFor(t *testing.T, kubeconfig string) (*kubernetes.Clientset, *rest.Config) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg), cfg
}

func expectForbidden(err error) error {
	if !apierrors.IsForbidden(err) {
		return fmt.Errorf("want 403 Forbidden, got %v", err)
	}
	return nil
}

func TestAuthorizationEndToEnd(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl not found on PATH; install it (hack/install-deps.sh) to run this test")
	}
	c := startCluster(t)
	ctx := context.Background()
	admin := c.adminClient(t)

	for _, ns := range []string{"demo", "other"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("admin creates namespace %s: %v", ns, err)
		}
		// The controller-manager is not running: make what it would.
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("admin creates default service account in %s: %v", ns, err)
		}
	}
	if _, err := admin.RbacV1().Roles("demo").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			{Verbs: []string{"create"}, APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles"}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("demo").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev-reads-pods"},
		RoleRef:  rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: "Group", Name: "dev"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	devConfig := c.userKubeconfig(t, "dave", "dev")
	dev, _ := clientFor(t, devConfig)

	t.Run("dev group gets exactly what the RoleBinding grants", func(t *testing.T) {
		testwait.ForNil(t, 10*time.Second, "list pods in demo", func() error {
			_, err := dev.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
			return err
		})
		if err := expectForbidden(dev.CoreV1().Pods("demo").Delete(ctx, "x", metav1.DeleteOptions{})); err != nil {
			t.Errorf("delete pod: %v", err)
		}
		_, err := dev.CoreV1().Pods("other").List(ctx, metav1.ListOptions{})
		if err := expectForbidden(err); err != nil {
			t.Errorf("list pods in other namespace: %v", err)
		}
		_, err = dev.CoreV1().Secrets("demo").List(ctx, metav1.ListOptions{})
		if err := expectForbidden(err); err != nil {
			t.Errorf("list secrets: %v", err)
		}
	})

	t.Run("kubectl auth can-i --list shows the grant", func(t *testing.T) {
		out, err := exec.Command(kubectl, "--kubeconfig", devConfig, "auth", "can-i", "--list", "-n", "demo").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl auth can-i --list: %v\n%s", err, out)
		}
		var podsLine string
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "pods" {
				podsLine = l
			}
		}
		if !strings.Contains(podsLine, "[get list watch]") {
			t.Errorf("no pods [get list watch] line in:\n%s", out)
		}
		if !strings.Contains(string(out), "selfsubjectaccessreviews.authorization.k8s.io") {
			t.Errorf("system:basic-user rules missing from:\n%s", out)
		}
		out, err = exec.Command(kubectl, "--kubeconfig", devConfig, "auth", "can-i", "delete", "pods", "-n", "demo").CombinedOutput()
		if err == nil || strings.TrimSpace(string(out)) != "no" {
			t.Errorf("can-i delete pods = %q, %v; want no", out, err)
		}
	})

	t.Run("writing a role with rules not held is refused", func(t *testing.T) {
		_, err := dev.RbacV1().Roles("demo").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "grab"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not currently held") {
			t.Errorf("create escalating role: %v", err)
		}
		if _, err := dev.RbacV1().Roles("demo").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "subset"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}, metav1.CreateOptions{}); err != nil {
			t.Errorf("create role within held rules: %v", err)
		}
	})

	t.Run("impersonation needs the impersonate verb", func(t *testing.T) {
		_, devRest := clientFor(t, devConfig)
		asAlice := rest.CopyConfig(devRest)
		asAlice.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
		alice := kubernetes.NewForConfigOrDie(asAlice)
		_, err := alice.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "dave" cannot impersonate`) {
			t.Errorf("dave acting as alice without the verb: %v", err)
		}
		if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "impersonate-alice"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"alice"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dave-impersonates"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "impersonate-alice"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "dave"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Once dave may impersonate, requests are alice's: she holds nothing in demo.
		testwait.ForNil(t, 10*time.Second, "dave acts as alice", func() error {
			_, err := alice.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "alice" cannot list`) {
				return fmt.Errorf("want alice's 403, got %v", err)
			}
			return nil
		})
		out, err := exec.Command(kubectl, "--kubeconfig", devConfig, "--as", "alice", "auth", "can-i", "list", "pods", "-n", "demo").CombinedOutput()
		if strings.TrimSpace(string(out)) != "no" {
			t.Errorf("kubectl --as alice auth can-i list pods = %q (%v), want no", out, err)
		}
		out, err = exec.Command(kubectl, "--kubeconfig", devConfig, "--as", "bob", "auth", "can-i", "list", "pods", "-n", "demo").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "impersonate") {
			t.Errorf("kubectl --as bob (not granted) = %q, %v; want an impersonation error", out, err)
		}
	})

	t.Run("anonymous gets 403 on /api and 200 on /healthz", func(t *testing.T) {
		anon := rest.AnonymousClientConfig(&rest.Config{Host: c.server, TLSClientConfig: rest.TLSClientConfig{CAData: c.ca.CertPEM}})
		rt, err := rest.TransportFor(anon)
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: rt}
		for path, want := range map[string]int{"/api": 403, "/healthz": 200, "/version": 200, "/apis": 403} {
			resp, err := client.Get(c.server + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("anonymous GET %s = %d, want %d", path, resp.StatusCode, want)
			}
		}
	})

	t.Run("a node reads only the secrets its pods use", func(t *testing.T) {
		for _, name := range []string{"used", "unused"} {
			if _, err := admin.CoreV1().Secrets("demo").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{
			NodeName:   "n1",
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes:    []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "used"}}}},
		}}
		if _, err := admin.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		node, _ := clientFor(t, c.userKubeconfig(t, "system:node:n1", "system:nodes"))
		testwait.ForNil(t, 10*time.Second, "node reads its pod's secret", func() error {
			_, err := node.CoreV1().Secrets("demo").Get(ctx, "used", metav1.GetOptions{})
			return err
		})
		_, err := node.CoreV1().Secrets("demo").Get(ctx, "unused", metav1.GetOptions{})
		if err := expectForbidden(err); err != nil {
			t.Errorf("node reads an unused secret: %v", err)
		}
		other, _ := clientFor(t, c.userKubeconfig(t, "system:node:n2", "system:nodes"))
		_, err = other.CoreV1().Secrets("demo").Get(ctx, "used", metav1.GetOptions{})
		if err := expectForbidden(err); err != nil {
			t.Errorf("another node reads the secret: %v", err)
		}
	})

	t.Run("default policy is in place", func(t *testing.T) {
		for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:aggregate-to-edit", "system:node", "system:public-info-viewer", "system:controller:job-controller"} {
			if _, err := admin.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("clusterrole %s: %v", name, err)
			}
		}
		if _, err := admin.RbacV1().Roles("kube-system").Get(ctx, "extension-apiserver-authentication-reader", metav1.GetOptions{}); err != nil {
			t.Errorf("role extension-apiserver-authentication-reader: %v", err)
		}
	})
}
