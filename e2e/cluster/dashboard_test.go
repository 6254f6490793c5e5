package cluster

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
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
	base := "https://" + addr
	jar, _ := cookiejar.New(nil)
	// The console's certificate is its own self-signed one.
	c := &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	do := func(req *http.Request) (int, string) {
		t.Helper()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v (port-forward: %s)", req.Method, req.URL.Path, err, stderr.String())
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	page, _ := http.NewRequest("GET", base+"/", nil)
	if code, body := do(page); code != http.StatusOK || !strings.Contains(body, "app.js") {
		t.Fatalf("GET / = %d %s", code, body)
	}
	u, _ := url.Parse(base)
	csrf := ""
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "trireme-csrf" {
			csrf = ck.Value
		}
	}
	login, _ := http.NewRequest("POST", base+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	login.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	login.Header.Set("X-CSRF-Token", csrf)
	login.Header.Set("Origin", base)
	if code, body := do(login); code != http.StatusOK || !strings.Contains(body, "system:serviceaccount:default:dash-viewer") {
		t.Fatalf("sign in = %d %s", code, body)
	}
	pods, _ := http.NewRequest("GET", base+"/api/k8s/api/v1/namespaces/kube-system/pods?as=table&limit=50", nil)
	if code, body := do(pods); code != http.StatusOK || !strings.Contains(body, "trireme-dashboard") {
		t.Fatalf("the viewer's pod list = %d %s", code, body)
	}
	// view reads no Secrets: the console asks as the user, so it gets the 403.
	secrets, _ := http.NewRequest("GET", base+"/api/k8s/api/v1/namespaces/kube-system/secrets", nil)
	if code, body := do(secrets); code != http.StatusForbidden {
		t.Fatalf("the viewer's secret list = %d %s, want 403", code, body)
	}
}
