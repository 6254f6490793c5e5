package crd_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"trireme.dev/e2e/internal/extapiserver"

	"trireme.dev/componentbase/testwait"
)

// TestAggregatedAPI starts an extension apiserver built on k8s.io/apiserver,
// registers it with an APIService behind a Service, and checks that kubectl
// reaches it through the aggregator, that the APIService turns unavailable
// with a reason when the extension stops, and that the rest of the API
// keeps working meanwhile.
func TestAggregatedAPI(t *testing.T) {
	ns := newNamespace(t, "wardle")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	ext, err := extapiserver.New(extapiserver.Options{
		Kubeconfig:  srv.KubeconfigPath(),
		Listener:    l,
		CertDir:     t.TempDir(),
		ServiceName: "wardle." + ns + ".svc",
		Flunders:    []string{"alpha", "beta"},
	})
	if err != nil {
		t.Fatalf("build extension apiserver: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- ext.Run(ctx) }()
	stop := func() {
		cancel()
		select {
		case err := <-stopped:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("extension apiserver: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("extension apiserver did not stop within a minute")
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})

	name := "v1." + extapiserver.Group
	kubectlStdinOK(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: wardle, namespace: %[1]s}
spec:
  ports: [{name: https, port: 443, targetPort: %[2]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: wardle-1
  namespace: %[1]s
  labels: {kubernetes.io/service-name: wardle}
addressType: IPv4
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
ports: [{name: https, port: %[2]d, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: %[3]s}
spec:
  group: %[4]s
  version: v1
  service: {namespace: %[1]s, name: wardle, port: 443}
  caBundle: %[5]s
  groupPriorityMinimum: 1000
  versionPriority: 15
`, ns, port, name, extapiserver.Group, base64.StdEncoding.EncodeToString(ext.CABundle)), "apply", "-f", "-")
	t.Cleanup(func() { srv.Kubectl(t, "delete", "apiservice", name, "--wait=false") })

	kubectlOK(t, "wait", "--for", "condition=Available", "--timeout", "90s", "apiservice/"+name)
	out := kubectlOK(t, "get", "apiservice", name).Stdout
	if h := header(out); len(h) < 3 || h[2] != "AVAILABLE" || !strings.Contains(out, "True") {
		t.Errorf("kubectl get apiservice:\n%s", out)
	}
	if svc := strings.Fields(strings.SplitN(out, "\n", 3)[1])[1]; svc != ns+"/wardle" {
		t.Errorf("SERVICE column %q, want %s/wardle", svc, ns)
	}

	// Through the aggregator, as the admin user: the extension server
	// trusts the front proxy's headers and asks the cluster to authorize.
	testwait.For(t, time.Minute, "flunders listed through the aggregator", func(context.Context) (bool, error) {
		res := srv.Kubectl(t, "get", "flunders")
		if res.ExitCode != 0 {
			return false, errors.New(res.String())
		}
		return strings.Contains(res.Stdout, "alpha") && strings.Contains(res.Stdout, "beta"), errors.New(res.Stdout)
	})
	if out := kubectlOK(t, "get", "flunder", "alpha", "-o", "jsonpath={.spec.reference}").Stdout; out != "e2e" {
		t.Errorf("flunder alpha spec.reference = %q", out)
	}
	if out := kubectlOK(t, "api-resources", "--api-group", extapiserver.Group).Stdout; !strings.Contains(out, "flunders") {
		t.Errorf("kubectl api-resources does not list flunders:\n%s", out)
	}

	stop()
	testwait.For(t, 2*time.Minute, "APIService unavailable once the extension stops", func(context.Context) (bool, error) {
		got := kubectlOK(t, "get", "apiservice", name, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason}`).Stdout
		return got == "False FailedDiscoveryCheck", fmt.Errorf("Available condition: %q", got)
	})
	if out := kubectlOK(t, "get", "apiservice", name).Stdout; !strings.Contains(out, "False (FailedDiscoveryCheck)") {
		t.Errorf("kubectl get apiservice does not show the reason:\n%s", out)
	}
	if res := srv.Kubectl(t, "get", "flunders"); res.ExitCode == 0 || !strings.Contains(res.Stderr, "ServiceUnavailable") && !strings.Contains(res.Stderr, "service unavailable") && !strings.Contains(res.Stderr, "503") {
		t.Errorf("kubectl get flunders with the extension down: %s", res)
	}
	// The rest of the API is unaffected.
	kubectlOK(t, "create", "configmap", "still-works", "-n", ns)
	kubectlOK(t, "get", "deployments", "-A")
	kubectlOK(t, "get", "crd")
}
