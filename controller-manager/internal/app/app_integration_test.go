package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"

	"trireme.dev/componentbase/testwait"
)

// apiserverBin returns a trireme-apiserver binary: $TRIREME_APISERVER_BIN,
// or one built from the workspace. The controller-manager may not import
// the apiserver's packages, so the test runs the real process.
func apiserverBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TRIREME_APISERVER_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "trireme-apiserver")
	cmd := exec.Command("go", "build", "-o", bin, "trireme.dev/apiserver/cmd/trireme-apiserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build trireme-apiserver (inside the go.work workspace, or set TRIREME_APISERVER_BIN): %v\n%s", err, out)
	}
	return bin
}

// startAPIServer runs a dev-mode apiserver and returns its admin
// kubeconfig path once it answers /readyz; it is stopped by PID at cleanup.
func startAPIServer(t *testing.T) string {
	t.Helper()
	return testcluster.StartAPIServer(t, testcluster.APIServerOptions{Binary: apiserverBin(t)}).KubeconfigPath()
}

func clientFor(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// adminHTTPClient presents kubeconfig's client certificate and trusts any
// server certificate (the controller-manager's is self-signed).
func adminHTTPClient(t *testing.T, kubeconfig string) *http.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, ""
	cfg.TLSClientConfig.Insecure = true
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc.Timeout = 5 * time.Second
	return hc
}

// TestAgainstAPIServer runs the controller-manager in-process, with leader
// election, against the real apiserver binary.
func TestAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds and starts the apiserver")
	}
	kubeconfig := startAPIServer(t)
	client, err := clientFor(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	port := freeport.For(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{
			"--kubeconfig", kubeconfig,
			"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
			"--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
			"--leader-elect", "--leader-elect-retry-period", "500ms",
			"--resource-quota-sync-period", "10s",
			"-v", "2",
		}, command.Streams{})
	}()

	t.Run("holds the leader election lease", func(t *testing.T) {
		testwait.For(t, 30*time.Second, "lease kube-system/kube-controller-manager", func(ctx context.Context) (bool, error) {
			l, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
			return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", nil
		})
	})

	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("new namespace gets the default serviceaccount", func(t *testing.T) {
		testwait.For(t, 30*time.Second, "serviceaccount demo/default", func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().ServiceAccounts("demo").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		})
	})

	t.Run("new namespace gets kube-root-ca.crt with the cluster CA", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		testwait.For(t, 30*time.Second, "configmap demo/kube-root-ca.crt", func(ctx context.Context) (bool, error) {
			cm, err := client.CoreV1().ConfigMaps("demo").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			return err == nil && cm.Data["ca.crt"] == string(cfg.CAData), nil
		})
	})

	t.Run("resourcequota status counts pods", func(t *testing.T) {
		q := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "demo"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				corev1.ResourcePods:        resource.MustParse("2"),
				corev1.ResourceRequestsCPU: resource.MustParse("1"),
				"count/deployments.apps":   resource.MustParse("3"),
			}},
		}
		if _, err := client.CoreV1().ResourceQuotas("demo").Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "demo"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
			}}},
		}
		if _, err := client.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var last corev1.ResourceQuotaStatus
		testwait.For(t, 30*time.Second, "quota usage", func(ctx context.Context) (bool, error) {
			got, err := client.CoreV1().ResourceQuotas("demo").Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			last = got.Status
			pods, cpu, deploys := last.Used[corev1.ResourcePods], last.Used[corev1.ResourceRequestsCPU], last.Used["count/deployments.apps"]
			return len(last.Hard) == 3 && pods.Value() == 1 && cpu.MilliValue() == 250 && deploys.Value() == 0 &&
				pods.Format != "" && len(last.Used) == 3, nil
		})
		if t.Failed() {
			t.Logf("last status: %+v", last)
		}
	})

	t.Run("an Ingress naming a missing Service gets a Warning Event", func(t *testing.T) {
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: "demo"},
			Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: "ghost", Port: networkingv1.ServiceBackendPort{Number: 80},
			}}},
		}
		if _, err := client.NetworkingV1().Ingresses("demo").Create(ctx, ing, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, 30*time.Second, "Warning ServiceNotFound on ingress demo/broken", func(ctx context.Context) (bool, error) {
			events, err := client.CoreV1().Events("demo").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Ingress,involvedObject.name=broken"})
			if err != nil {
				return false, nil
			}
			for _, e := range events.Items {
				if e.Type == corev1.EventTypeWarning && e.Reason == "ServiceNotFound" {
					return true, nil
				}
			}
			return false, nil
		})
	})

	t.Run("serves healthz and metrics", func(t *testing.T) {
		// The serving certificate is self-signed; only reachability,
		// content and access are checked here. The admin's client
		// certificate is verified with the client CA the apiserver
		// publishes, and RBAC lets it read /metrics.
		anonymous := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		admin := adminHTTPClient(t, kubeconfig)
		get := func(hc *http.Client, path string, want int) string {
			resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != want {
				t.Fatalf("GET %s: %d %s, want %d", path, resp.StatusCode, body, want)
			}
			return string(body)
		}
		if body := get(anonymous, "/healthz", http.StatusOK); body != "ok" {
			t.Errorf("/healthz = %q", body)
		}
		get(anonymous, "/metrics", http.StatusForbidden)
		// The client CA comes from an informer started with the port.
		testwait.For(t, 30*time.Second, "admin reads /metrics", func(context.Context) (bool, error) {
			resp, err := admin.Get(fmt.Sprintf("https://127.0.0.1:%d/metrics", port))
			if err != nil {
				return false, nil
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
		get(admin, "/debug/pprof/", http.StatusOK)
		metrics := get(admin, "/metrics", http.StatusOK)
		for _, want := range []string{
			`trireme_controller_manager_syncs_total{controller="serviceaccount",result="success"}`,
			`trireme_controller_manager_leader 1`,
			`trireme_controller_manager_workqueue_adds_total{name="resourcequota"}`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	t.Run("releases the lease on stop", func(t *testing.T) {
		l, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "kube-controller-manager", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			t.Errorf("lease still held by %s", *l.Spec.HolderIdentity)
		}
	})
}
