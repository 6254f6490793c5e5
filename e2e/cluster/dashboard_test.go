package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"
	"time"

	"trireme.dev/e2e/internal/console"
)

// TestDashboard: the addons chart's console is reached with kubectl
// port-forward; a user signs in with a token from kubectl create token and
// reads what that user may read, while the console's own ServiceAccount
// holds no token and no binding. Then the chart publishes it at an Ingress
// host, which Traefik serves with the host's certificate while it verifies
// the console's against the CA the chart made.
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

	t.Run("behind an Ingress host", func(t *testing.T) { dashboardIngress(t, token) })
}

// dashboardIngress turns on the chart's dashboard.ingress with a host
// certificate of a CA of its own, and signs in through Traefik's address.
// Traefik reaches the console over HTTPS: a certificate it could not verify
// would answer 500, so a 200 shows that the chart's ServersTransport is
// read and trusted.
func dashboardIngress(t *testing.T, token string) {
	lb := lbAddress(t, "kube-system", "traefik")
	ca, pair := serving("dashboard.test")
	certFile, keyFile, err := pair.Write(t.TempDir(), "tls")
	if err != nil {
		t.Fatal(err)
	}
	must(t, "-n", "kube-system", "create", "secret", "tls", "dashboard-host-tls", "--cert", certFile, "--key", keyFile)
	t.Cleanup(func() {
		upgradeAddons(t, `dashboard.ingress={"enabled":false,"host":"","tlsSecret":""}`)
		_, _ = kubectl("-n", "kube-system", "delete", "secret", "dashboard-host-tls", "--ignore-not-found")
	})
	upgradeAddons(t, `dashboard.ingress={"enabled":true,"host":"dashboard.test","tlsSecret":"dashboard-host-tls"}`)
	waitIngressAddress(t, "kube-system", "trireme-dashboard", lb)

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM)
	host := viaAddress(lb, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	slowly.ForNil(t, 60*time.Second, "https://dashboard.test/ through Traefik", func() error {
		return expect(host, "https://dashboard.test/", http.StatusOK, "")
	})
	b := console.OpenWith(t, "https://dashboard.test", host.Transport)
	if r := b.SignIn(token); r.Code != http.StatusOK || !strings.Contains(r.Body, "system:serviceaccount:default:dash-viewer") {
		t.Fatalf("sign in through the Ingress = %d %s", r.Code, r.Body)
	}
	if r := b.Do("GET", "/api/k8s/api/v1/namespaces/kube-system/pods?as=table&limit=50", "", nil); r.Code != http.StatusOK || !strings.Contains(r.Body, "trireme-dashboard") {
		t.Fatalf("the viewer's pod list through the Ingress = %d %s", r.Code, r.Body)
	}
}
