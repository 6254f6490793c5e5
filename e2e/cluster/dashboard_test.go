package cluster

import (
	"net/http"
	"strings"
	"testing"

	"trireme.dev/e2e/internal/console"
)

// TestDashboard: the addons chart's console is reached with kubectl
// port-forward; a user signs in with a token from kubectl create token and
// reads what that user may read, while the console's own ServiceAccount
// holds no token and no binding.
func TestDashboard(t *testing.T) {
	begin(t)
	must(t, "-n", "kube-system", "rollout", "status", "deployment/trireme-dashboard", "--timeout=120s")
	if got := must(t, "-n", "kube-system", "get", "deployment", "trireme-dashboard", "-o", "jsonpath={.spec.template.spec.automountServiceAccountToken}"); got != "false" {
		t.Errorf("the console's pods mount a ServiceAccount token (automountServiceAccountToken %q)", got)
	}
	bindings := must(t, "get", "clusterrolebindings,rolebindings", "-A", "-o", `jsonpath={range .items[*]}{.subjects[*].name}{"\n"}{end}`)
	for _, l := range strings.Split(bindings, "\n") {
		if strings.Contains(" "+l+" ", " trireme-dashboard ") {
			t.Errorf("a binding names the console's ServiceAccount: %q", l)
		}
	}
	must(t, "-n", "default", "create", "serviceaccount", "dash-viewer")
	must(t, "create", "clusterrolebinding", "dash-viewer", "--clusterrole=view", "--serviceaccount=default:dash-viewer")
	token := strings.TrimSpace(must(t, "-n", "default", "create", "token", "dash-viewer"))

	addr, stderr := portForward(t, "-n", "kube-system", "service/trireme-dashboard", ":443")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("port-forward: %s", stderr.String())
		}
	})
	b := console.Open(t, "https://"+addr)
	if r := b.SignIn(token); r.Code != http.StatusOK || !strings.Contains(r.Body, "system:serviceaccount:default:dash-viewer") {
		t.Fatalf("sign in = %d %s", r.Code, r.Body)
	}
	if r := b.Do("GET", "/api/k8s/api/v1/namespaces/kube-system/pods?as=table&limit=50", "", nil); r.Code != http.StatusOK || !strings.Contains(r.Body, "trireme-dashboard") {
		t.Fatalf("the viewer's pod list = %d %s", r.Code, r.Body)
	}
	// view reads no Secrets: the console asks as the user, so it gets the 403.
	if r := b.Do("GET", "/api/k8s/api/v1/namespaces/kube-system/secrets", "", nil); r.Code != http.StatusForbidden {
		t.Fatalf("the viewer's secret list = %d %s, want 403", r.Code, r.Body)
	}
}
