package apiserver_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// eventuallyKubectl retries kubectl until check accepts its result or the
// timeout passes: controllers act a moment after the write they react to.
func eventuallyKubectl(t *testing.T, timeout time.Duration, check func(stdout, stderr string, code int) error, args ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		res := srv.Kubectl(t, args...)
		err := check(res.Stdout, res.Stderr, res.ExitCode)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, res)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestResourceQuotaWithControllerManager is the quota path as users meet
// it: the controller-manager fills the quota's status and makes the
// namespace's default ServiceAccount, and admission then counts pods.
func TestResourceQuotaWithControllerManager(t *testing.T) {
	ns := newNamespace(t, "quota-e2e")
	kubectlOK(t, "create", "quota", "two-pods", "--hard=pods=2", "-n", ns)
	eventuallyKubectl(t, 30*time.Second, func(stdout, _ string, _ int) error {
		if stdout != "0" {
			return fmt.Errorf("status.used.pods = %q, want 0 once the controller-manager synced the quota", stdout)
		}
		return nil
	}, "get", "quota", "two-pods", "-n", ns, "-o", "jsonpath={.status.used.pods}")
	for _, name := range []string{"one", "two"} {
		// The first run may race the default ServiceAccount's creation.
		eventuallyKubectl(t, 30*time.Second, func(_, stderr string, code int) error {
			if code != 0 {
				return fmt.Errorf("exit %d: %s", code, stderr)
			}
			return nil
		}, "run", name, "--image=busybox", "-n", ns, "--restart=Never")
	}
	res := srv.Kubectl(t, "run", "three", "--image=busybox", "-n", ns, "--restart=Never")
	if res.ExitCode == 0 {
		t.Fatalf("third pod admitted past a quota of 2:\n%s", res)
	}
	wantMatch(t, res.Stderr, `\(Forbidden\)`, `exceeded quota: two-pods, requested: pods=1, used: pods=2, limited: pods=2`)
	eventuallyKubectl(t, 30*time.Second, func(stdout, _ string, _ int) error {
		if stdout != "2" {
			return fmt.Errorf("status.used.pods = %q, want 2", stdout)
		}
		return nil
	}, "get", "quota", "two-pods", "-n", ns, "-o", "jsonpath={.status.used.pods}")
}

// TestAnonymousRequests checks what a request without credentials may
// reach: the health and version endpoints, and nothing of the API.
func TestAnonymousRequests(t *testing.T) {
	ca, err := os.ReadFile(filepath.Join(srv.DataDir(), "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	tests := []struct {
		path string
		want int
	}{
		{"/healthz", http.StatusOK},
		{"/livez", http.StatusOK},
		{"/readyz", http.StatusOK},
		{"/version", http.StatusOK},
		{"/api", http.StatusForbidden},
		{"/api/v1/namespaces/default/secrets", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d%s", srv.Port(), tt.path))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("GET %s anonymously: %d, want %d\n%s", tt.path, resp.StatusCode, tt.want, body)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(string(body), `User \"system:anonymous\"`) {
				t.Errorf("403 body does not name system:anonymous: %s", body)
			}
		})
	}
}
