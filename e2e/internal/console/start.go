package console

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
	"trireme.dev/componentbase/testwait"
)

// Start runs the built trireme-dashboard against the apiserver kubeconfig
// names (only its server and CA are used) and returns its URL once it is
// ready; it is stopped by PID when the test ends.
func Start(t testing.TB, kubeconfig string) string {
	t.Helper()
	return Run(t, kubeconfig).Base
}

// Console is a running trireme-dashboard that a test can stop and start
// again: on the same port and with the same session key, so that the
// page's session outlives the restart as it does across a rollout.
type Console struct {
	// Base is the console's URL, https://127.0.0.1:port.
	Base string
	args []string
	bin  string
	out  bytes.Buffer
	proc *testcluster.Process
}

// Run starts the console as Start does and returns it.
func Run(t testing.TB, kubeconfig string) *Console {
	t.Helper()
	bin, err := testcluster.Binary("trireme-dashboard")
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "session.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freeport.For(t)
	c := &Console{
		Base: fmt.Sprintf("https://127.0.0.1:%d", port),
		bin:  bin,
		args: []string{"--kubeconfig", kubeconfig, "--session-key-file", key, "--secure-port", fmt.Sprint(port), "--bind-address", "127.0.0.1", "-v", "2"},
	}
	t.Cleanup(func() {
		c.Stop(t)
		if t.Failed() {
			t.Logf("trireme-dashboard log:\n%s", c.out.String())
		}
	})
	c.Start(t)
	return c
}

// Start starts the stopped console and waits until it is ready.
func (c *Console) Start(t testing.TB) {
	t.Helper()
	p, err := testcluster.StartProcess(c.bin, c.args, &c.out)
	if err != nil {
		t.Fatal(err)
	}
	c.proc = p
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	testwait.ForTrue(t, 30*time.Second, "trireme-dashboard ready", func() bool {
		r, err := hc.Get(c.Base + "/readyz")
		if err != nil {
			return false
		}
		_ = r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
}

// PID is the running console's process ID (0 when stopped), for a
// benchmark that reads its memory.
func (c *Console) PID() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.PID()
}

// Stop stops the console by PID; a stopped console stays stopped.
func (c *Console) Stop(t testing.TB) {
	t.Helper()
	if c.proc == nil {
		return
	}
	if err := c.proc.Stop(5 * time.Second); err != nil {
		t.Logf("stop trireme-dashboard: %v", err)
	}
	c.proc = nil
}

// Token makes a ServiceAccount bound to clusterRole and returns a token
// for it, as `kubectl create token` would.
func Token(t testing.TB, cs kubernetes.Interface, ns, name, clusterRole string) string {
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
