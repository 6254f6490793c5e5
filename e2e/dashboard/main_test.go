// Package dashboard_test runs trireme-dashboard against a real apiserver
// and drives its HTTP API as a page would: sign in with ServiceAccount
// tokens, act as those users only, and be refused what RBAC, CSRF and the
// API refuse.
package dashboard_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testwait"
	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	// The controller-manager makes namespaces' default ServiceAccounts and
	// turns Deployments into ReplicaSets and pods, as a cluster does.
	os.Exit(testcluster.RunSuite(m, testcluster.SuiteOptions{Name: "e2e/dashboard", APIServer: testcluster.APIServerOptions{ControllerManager: true}}, &srv))
}

// newNamespace makes namespace ns and waits for its default
// ServiceAccount, without which pods are refused.
func newNamespace(t testing.TB, ns string) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 60*time.Second, "namespace "+ns+"'s default ServiceAccount", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
	return cs
}

// viewerTab starts a console and a browser tab signed in to it as user, a
// ServiceAccount of ns bound to the view role.
func viewerTab(t testing.TB, cs kubernetes.Interface, ns, user string) (*console.Console, context.Context) {
	t.Helper()
	token := console.Token(t, cs, ns, user, "view")
	c := console.Run(t, srv.KubeconfigPath())
	tab := browser.New(t)
	browser.Run(t, tab, "sign in", browser.SignIn(c.Base, token, "system:serviceaccount:"+ns+":"+user))
	return c, tab
}
