package integration

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trireme.dev/componentbase/testcluster"
)

// requestTimeout bounds one test's calls; a healthy server answers in
// milliseconds, so hitting it means the server hung.
const requestTimeout = time.Minute

// testContext returns a context that ends with the test or after requestTimeout.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
	t.Cleanup(cancel)
	return ctx
}

var nameCounter atomic.Int64

// uniqueName returns prefix followed by a number no other call returns.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nameCounter.Add(1))
}

// newNamespace creates a namespace for one test. Namespaces are left behind:
// the server is thrown away with its data when the package's tests end.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(testContext(t), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("it")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create test namespace: %v", err)
	}
	createDefaultServiceAccount(t, client, ns.Name)
	return ns.Name
}

// createDefaultServiceAccount stands in for the controller-manager, which
// these tests do not run: ServiceAccount admission refuses pods until their
// namespace has its default ServiceAccount.
func createDefaultServiceAccount(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	_, err := c.CoreV1().ServiceAccounts(ns).Create(testContext(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create default service account in %s: %v", ns, err)
	}
}

// wantStatus fails the test unless err is an API error with the HTTP code.
func wantStatus(t *testing.T, err error, code int32) *apierrors.StatusError {
	t.Helper()
	if err == nil {
		t.Fatalf("got success, want HTTP %d", code)
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("got %T %v, want an API status error with HTTP %d", err, err, code)
	}
	if se.ErrStatus.Code != code {
		t.Fatalf("got HTTP %d (%s: %s), want %d", se.ErrStatus.Code, se.ErrStatus.Reason, se.ErrStatus.Message, code)
	}
	return se
}

// wantCause fails the test unless the status error names field among its causes.
func wantCause(t *testing.T, se *apierrors.StatusError, field string) {
	t.Helper()
	var fields []string
	if d := se.ErrStatus.Details; d != nil {
		for _, c := range d.Causes {
			if c.Field == field {
				return
			}
			fields = append(fields, c.Field)
		}
	}
	t.Fatalf("error %q has causes at [%s], want one at %s", se.ErrStatus.Message, strings.Join(fields, ", "), field)
}

// statusCode is the HTTP code of an API error, 0 for other errors.
func statusCode(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}

// startOwnCluster starts a server of the test's own, at the suite's depth,
// with the apiserver flags args, for a test that would disturb the shared
// one. It is closed when the test ends; at the process depth a failed
// test logs the tail of the server's log first.
func startOwnCluster(t *testing.T, args ...string) testcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c, err := startCluster(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, ok := c.(*testcluster.APIServer); ok && t.Failed() {
			t.Logf("trireme-apiserver log (last lines):\n%s", s.LogTail(200))
		}
		if err := c.Close(); err != nil {
			t.Errorf("stop apiserver: %v", err)
		}
	})
	return c
}

// kubectlCmd is kubectl with args against c, with this run's cache.
func kubectlCmd(c testcluster.Cluster, args ...string) testcluster.KubectlCmd {
	return testcluster.KubectlCmd{Kubeconfig: c.KubeconfigPath(), CacheDir: kubectlCache, Args: args}
}

// kubectl runs kubectl against the shared server. A non-zero exit is in
// the result, not a failure: tests of bad input expect one.
func kubectl(t *testing.T, args ...string) testcluster.Result {
	t.Helper()
	return kubectlCmd(shared, args...).Run(t)
}

// kubectlStdin is kubectl with stdin fed to it, as for `create -f -`.
func kubectlStdin(t *testing.T, stdin string, args ...string) testcluster.Result {
	t.Helper()
	cmd := kubectlCmd(shared, args...)
	cmd.Stdin = stdin
	return cmd.Run(t)
}

// kubectlOK is kubectl that fails the test unless kubectl exits 0.
func kubectlOK(t *testing.T, args ...string) testcluster.Result {
	t.Helper()
	return kubectlCmd(shared, args...).RunOK(t)
}

// wantStdout and wantMatch are testcluster's checks, under the names these
// tests use.
var (
	wantStdout = testcluster.WantStdout
	wantMatch  = testcluster.WantMatch
)

// jsonpath returns the value kubectl prints for a JSONPath template.
func jsonpath(t *testing.T, template string, args ...string) string {
	t.Helper()
	return kubectlOK(t, append(args, "-o", "jsonpath="+template)...).Stdout
}

// assertServing fails unless the shared server still answers /readyz and
// a read, through client-go and kubectl: bad input must never take it
// down.
func assertServing(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil || string(body) != "ok" {
		t.Fatalf("server stopped serving: GET /readyz = %q, %v", body, err)
	}
	kubectlOK(t, "get", "namespace", "default")
}

// serveTLS serves h over TLS on a loopback port with a self-signed
// certificate for host, and returns the port and the CA bundle that
// verifies it.
func serveTLS(t *testing.T, host string, h http.Handler) (int32, []byte) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return int32(l.Addr().(*net.TCPAddr).Port), certPEM
}

// serviceOnLoopback makes Service ns/name whose port 443 ("https") is
// served at 127.0.0.1:port, through an EndpointSlice written by hand (no
// controller runs here). The server reaches Services at their endpoints,
// so a webhook or extension server behind it needs no cluster DNS.
func serviceOnLoopback(t *testing.T, ns, name string, port int32) {
	t.Helper()
	ctx := testContext(t)
	if _, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
