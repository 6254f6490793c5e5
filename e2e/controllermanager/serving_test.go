package controllermanager_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testpki"

	"trireme.dev/componentbase/testwait"
)

// controllerManagerUser is the identity kubeadm's controller-manager.conf
// holds, bound by the bootstrap policy to system:kube-controller-manager.
const controllerManagerUser = "system:kube-controller-manager"

// TestSecurePortDelegatesToAPIServer runs a controller-manager on an
// apiserver of its own, as kubeadm does: its controller-manager.conf
// identity (not an admin) is also its authentication and authorization
// kubeconfig, so the bootstrap policy must let it review tokens and
// access and read the client CA. The shared suite's controller-manager
// serves no port.
func TestSecurePortDelegatesToAPIServer(t *testing.T) {
	s := testcluster.StartAPIServer(t, testcluster.APIServerOptions{})
	admin := s.Clientset(t)
	kubeconfig := userKubeconfig(t, s, controllerManagerUser)
	port, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := testcluster.Binary(testcluster.ControllerManagerBinary)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "controller-manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	proc, err := testcluster.StartProcess(bin, []string{
		"--kubeconfig", kubeconfig, "--leader-elect=false", "--controllers=serviceaccount",
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
	}, logFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := proc.Stop(10 * time.Second); err != nil {
			t.Errorf("stop controller-manager: %v", err)
		}
		if t.Failed() {
			logs, _ := os.ReadFile(logPath)
			t.Logf("controller-manager log:\n%s", logs)
		}
	})

	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(hc *http.Client, path, token string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	testwait.For(t, 30*time.Second, "controller-manager /healthz", func(context.Context) (bool, error) {
		code, _, err := get(hc, "/healthz", "")
		return err == nil && code == http.StatusOK, nil
	})

	token := metricsReaderToken(t, admin)
	tests := []struct {
		name, path, token string
		code              int
		want              string
	}{
		{name: "health open to anonymous", path: "/healthz", code: http.StatusOK, want: "ok"},
		{name: "metrics refused to anonymous", path: "/metrics", code: http.StatusForbidden},
		{name: "bad token unauthorized", path: "/metrics", token: "not-a-token", code: http.StatusUnauthorized},
		{name: "granted ServiceAccount reads metrics", path: "/metrics", token: token, code: http.StatusOK, want: "trireme_controller_manager_"},
		{name: "profiles refused to anonymous", path: "/debug/pprof/", code: http.StatusForbidden},
		// --profiling is on by default; the grant is for /metrics only.
		{name: "profiles not granted", path: "/debug/pprof/", token: token, code: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, err := get(hc, tt.path, tt.token)
			if err != nil {
				t.Fatalf("GET %s: %v", tt.path, err)
			}
			if code != tt.code || !strings.Contains(body, tt.want) {
				if len(body) > 300 {
					body = body[:300] + "..."
				}
				t.Errorf("GET %s = %d %q, want %d containing %q", tt.path, code, body, tt.code, tt.want)
			}
		})
	}
	// A client certificate is verified with the client CA the apiserver
	// publishes in kube-system/extension-apiserver-authentication, which
	// the controller-manager's identity must be allowed to read.
	t.Run("admin client certificate reads metrics", func(t *testing.T) {
		cfg := s.Config()
		cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, ""
		cfg.TLSClientConfig.Insecure = true
		admin, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		admin.Timeout = 5 * time.Second
		// The CA is loaded by an informer started with the port, so the
		// first requests may still be anonymous, as upstream's.
		testwait.For(t, 30*time.Second, "GET /metrics as admin = 200", func(context.Context) (bool, error) {
			code, body, err := get(admin, "/metrics", "")
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("%d %.300q", code, body)
			}
			return err == nil, err
		})
	})
}

// metricsReaderToken returns a token of a ServiceAccount that RBAC lets
// get /metrics, as a Prometheus scraper would hold.
func metricsReaderToken(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	ctx := context.Background()
	const name, ns = "cm-metrics-reader", "default"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount: %v", err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRole: %v", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRoleBinding: %v", err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	return tr.Status.Token
}

// userKubeconfig writes a copy of s's admin kubeconfig whose client
// certificate, signed by the cluster CA, names user instead, as
// kubeadm's component kubeconfigs do.
func userKubeconfig(t *testing.T, s *testcluster.APIServer, user string) string {
	t.Helper()
	ca, err := testpki.LoadCA(s.CACertPath(), s.CAKeyPath())
	if err != nil {
		t.Fatal(err)
	}
	pair := ca.Issue(testpki.Cert{CommonName: user, Usage: testpki.ClientAuth})
	cfg, err := clientcmd.LoadFromFile(s.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.ClientCertificate, ai.ClientKey, ai.Token, ai.TokenFile = "", "", "", ""
		ai.ClientCertificateData, ai.ClientKeyData = pair.CertPEM, pair.KeyPEM
	}
	path := filepath.Join(t.TempDir(), "controller-manager.conf")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
