package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/apiserver/internal/registry/proxy"
	"trireme.dev/apiserver/internal/testserver"
)

// TestProxyThroughAPIServer serves pods/proxy, services/proxy and
// nodes/proxy from a real apiserver to real backends. The backends listen
// on a test host in a network namespace: the apiserver refuses loopback
// backends, as upstream does.
func TestProxyThroughAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	host := newTestHost(t)
	hostIP := host.IP
	dir := t.TempDir()
	pki := proxy.NewTestPKI(hostIP)
	kubeletCA, kubeletCert, kubeletKey := pki.WriteClientFiles(t, dir, "kubelet")

	app := serveOn(t, host, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "app %s %s?%s %s", r.Method, r.URL.Path, r.URL.RawQuery, body)
	}))
	kubelet := serveOn(t, host, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "kubelet %s %s", r.TLS.PeerCertificates[0].Subject.CommonName, r.URL.Path)
	}), pki)
	deadLn := host.Listen(t)
	deadPort := deadLn.Addr().(*net.TCPAddr).Port
	deadLn.Close()

	startCtx, cancelStart := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelStart()
	srv, err := testserver.Start(startCtx, testserver.Options{Verbose: testing.Verbose(), Args: []string{
		"--kubelet-client-certificate", kubeletCert,
		"--kubelet-client-key", kubeletKey,
		"--kubelet-certificate-authority", kubeletCA,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("stop apiserver: %v", err)
		}
	})
	cfg, kubeconfig := srv.Config(), srv.KubeconfigPath()
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The controller-manager is not running: make the ServiceAccount it
	// would, which ServiceAccount admission requires of every pod.
	if _, err := client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	makePod(ctx, t, client, "web", hostIP, app.port)
	makePod(ctx, t, client, "pending", "", app.port)
	makePod(ctx, t, client, "gone", hostIP, deadPort)
	makeService(ctx, t, client, "web", hostIP, app.port, "web")
	makeService(ctx, t, client, "lonely", "", 0, "")
	makeNode(ctx, t, client, "node-1", hostIP, kubelet.port)

	appPort := strconv.Itoa(app.port)
	tests := []struct {
		name, method, path, body string
		want                     string
		wantCode                 int
	}{
		{name: "pod by port number", method: "GET", path: "/api/v1/namespaces/default/pods/web:" + appPort + "/proxy/hello", want: "app GET /hello? "},
		{name: "pod by container port name with query", method: "GET", path: "/api/v1/namespaces/default/pods/web:http/proxy/hello?x=1", want: "app GET /hello?x=1 "},
		{name: "pod by first declared port", method: "GET", path: "/api/v1/namespaces/default/pods/web/proxy/a/b/", want: "app GET /a/b/? "},
		{name: "pod POST with body", method: "POST", path: "/api/v1/namespaces/default/pods/http:web:http/proxy/submit", body: "payload", want: "app POST /submit? payload"},
		{name: "service by port name", method: "GET", path: "/api/v1/namespaces/default/services/web:http/proxy/hello", want: "app GET /hello? "},
		{name: "service by port number", method: "GET", path: "/api/v1/namespaces/default/services/web:80/proxy/hello", want: "app GET /hello? "},
		{name: "node kubelet with client certificate", method: "GET", path: "/api/v1/nodes/node-1/proxy/healthz", want: "kubelet " + proxy.KubeletClientCN + " /healthz"},
		{name: "node other port", method: "GET", path: "/api/v1/nodes/node-1:" + appPort + "/proxy/metrics", want: "app GET /metrics? "},
		{name: "pod without IP", method: "GET", path: "/api/v1/namespaces/default/pods/pending:http/proxy/", wantCode: 503, want: `pod "pending" has no IP address`},
		{name: "pod whose port is closed", method: "GET", path: "/api/v1/namespaces/default/pods/gone:http/proxy/", wantCode: 503, want: "error trying to reach service"},
		{name: "missing pod", method: "GET", path: "/api/v1/namespaces/default/pods/ghost/proxy/", wantCode: 404, want: `pods "ghost" not found`},
		{name: "service without endpoints", method: "GET", path: "/api/v1/namespaces/default/services/lonely:http/proxy/", wantCode: 503, want: `no endpoints available for service "lonely"`},
		{name: "invalid id", method: "GET", path: "/api/v1/namespaces/default/services/ftp:web:http/proxy/", wantCode: 400, want: "invalid service request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, query, _ := strings.Cut(tt.path, "?")
			req := client.CoreV1().RESTClient().Verb(tt.method).AbsPath(path)
			if tt.body != "" {
				req = req.Body([]byte(tt.body))
			}
			for _, kv := range strings.Split(query, "&") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					req = req.Param(k, v)
				}
			}
			res := req.Do(ctx)
			// Error, unlike Raw, decodes the Status an error response carries.
			got, _ := res.Raw()
			err := res.Error()
			if tt.wantCode != 0 {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || int(status.Status().Code) != tt.wantCode || !strings.Contains(status.Status().Message, tt.want) {
					t.Fatalf("%s %s: error %v, want a %d Status containing %q", tt.method, tt.path, err, tt.wantCode, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %s: %v", tt.method, tt.path, err)
			}
			if string(got) != tt.want {
				t.Fatalf("%s %s = %q, want %q", tt.method, tt.path, got, tt.want)
			}
		})
	}

	t.Run("kubectl get --raw", func(t *testing.T) {
		out, err := exec.CommandContext(ctx, kubectl(t), "--kubeconfig", kubeconfig, "get", "--raw",
			"/api/v1/namespaces/default/pods/web:"+appPort+"/proxy/hello").CombinedOutput()
		if err != nil || string(out) != "app GET /hello? " {
			t.Fatalf("kubectl get --raw = %q, %v", out, err)
		}
	})
	t.Run("kubectl proxy", func(t *testing.T) {
		base := startKubectlProxy(ctx, t, kubeconfig)
		resp, err := http.Get(base + "/api/v1/namespaces/default/services/web:http/proxy/via-kubectl")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(body) != "app GET /via-kubectl? " {
			t.Fatalf("through kubectl proxy: %d %q", resp.StatusCode, body)
		}
	})
}

type backend struct {
	*httptest.Server
	port int
}

// serveOn starts h on the test host at a free port, over TLS with pki's
// kubelet certificates when tls is set.
func serveOn(t *testing.T, host *testHost, tls bool, h http.Handler, pki ...*proxy.TestPKI) backend {
	t.Helper()
	ln := host.Listen(t)
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = ln
	if tls {
		s.TLS = pki[0].ServerTLS()
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return backend{Server: s, port: ln.Addr().(*net.TCPAddr).Port}
}

// makePod creates a pod declaring port as "http" and, when ip is set,
// gives it that IP through the status subresource as a kubelet would.
func makePod(ctx context.Context, t *testing.T, client kubernetes.Interface, name, ip string, port int) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "busybox",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}},
		}}},
	}
	created, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	if ip == "" {
		return
	}
	created.Status.Phase = corev1.PodRunning
	created.Status.PodIP = ip
	created.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set pod %s IP: %v", name, err)
	}
}

// makeService creates a service with port "http" 80 and, when ip is set, an
// EndpointSlice with one ready endpoint at ip:port backed by pod.
func makeService(ctx context.Context, t *testing.T, client kubernetes.Interface, name, ip string, port int, pod string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP,
		}}},
	}
	if _, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
	if ip == "" {
		return
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: pod},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := client.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create endpointslice for %s: %v", name, err)
	}
}

// makeNode registers a node at ip whose kubelet serves on kubeletPort.
func makeNode(ctx context.Context, t *testing.T, client kubernetes.Interface, name, ip string, kubeletPort int) {
	t.Helper()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kubeletPort)}},
		},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
}

func kubectl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl not found in PATH: install it (the test runs kubectl get --raw and kubectl proxy against the apiserver): %v", err)
	}
	return path
}

// startKubectlProxy runs kubectl proxy on a free local port and returns its
// base URL; the process is killed when the test ends.
func startKubectlProxy(ctx context.Context, t *testing.T, kubeconfig string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, kubectl(t), "--kubeconfig", kubeconfig, "proxy", "--address=127.0.0.1", "--port=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read kubectl proxy banner: %v", err)
	}
	// "Starting to serve on 127.0.0.1:PORT"
	fields := strings.Fields(line)
	if len(fields) == 0 {
		t.Fatalf("unexpected kubectl proxy banner %q", line)
	}
	return "http://" + fields[len(fields)-1]
}
