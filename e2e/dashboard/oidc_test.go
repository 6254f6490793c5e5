package dashboard_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testoidc"
	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

// TestOIDCSignIn signs in to the console with an OpenID Connect ID token,
// against an apiserver that trusts a test issuer: the page names the user
// from the token's email claim and shows what its group may see; an
// expired token is refused with the reason.
func TestOIDCSignIn(t *testing.T) {
	issuer := testoidc.Start(t)
	own := testcluster.StartAPIServer(t, testcluster.APIServerOptions{ExtraArgs: []string{
		"--oidc-issuer-url", issuer.URL, "--oidc-client-id", "trireme-dashboard", "--oidc-ca-file", issuer.CAFile,
		"--oidc-username-claim", "email", "--oidc-groups-claim", "groups",
	}})
	cs, err := kubernetes.NewForConfig(own.Config())
	if err != nil {
		t.Fatal(err)
	}
	// A role of its own: view's rules come from aggregation, which the
	// controller-manager this server runs without would do.
	if _, err := cs.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "namespace-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "oidc-viewers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "namespace-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "dash-viewers"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claims := func(exp time.Time) map[string]any {
		return map[string]any{"iss": issuer.URL, "aud": "trireme-dashboard", "sub": "alice-1", "email": "alice@example.com",
			"email_verified": true, "groups": []string{"dash-viewers"}, "iat": time.Now().Add(-time.Minute).Unix(), "exp": exp.Unix()}
	}
	base := console.Start(t, own.KubeconfigPath())
	tab := browser.New(t)

	browser.Run(t, tab, "an expired ID token is refused",
		browser.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), issuer.Token(t, claims(time.Now().Add(-time.Minute)))),
		chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
		browser.WaitText("#reason", "Sign-in refused"),
	)
	browser.Run(t, tab, "sign in with an ID token",
		browser.SignIn(base, issuer.Token(t, claims(time.Now().Add(time.Hour))), "alice@example.com"),
		chromedp.Navigate(base+"/#/list/v1/namespaces"),
		browser.WaitText("#view", "kube-system"),
	)
}
