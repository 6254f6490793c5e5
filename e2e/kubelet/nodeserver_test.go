package kubelet_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// kubeletGet requests path on the node server with the client certificate
// in files (none when empty).
func kubeletGet(t testing.TB, files [2]string, path string) (int, []byte) {
	t.Helper()
	return kubeletGetWithin(t, files, path, 10*time.Second)
}

// kubeletGetWithin is kubeletGet with a timeout.
func kubeletGetWithin(t testing.TB, files [2]string, path string, timeout time.Duration) (int, []byte) {
	t.Helper()
	tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the kubelet's certificate is self-signed
	if files[0] != "" {
		cert, err := tls.LoadX509KeyPair(files[0], files[1])
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: tc}}
	resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d%s", suite.port, path))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func TestNodeServer(t *testing.T) {
	createPod(t, boundPod("stats", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}}))
	waitPod(t, "stats", 60*time.Second, "Running", isReady)
	if code, _ := kubeletGet(t, [2]string{}, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	if code, _ := kubeletGet(t, [2]string{}, "/pods"); code != http.StatusUnauthorized {
		t.Errorf("anonymous /pods: %d, want 401", code)
	}
	if code, body := kubeletGet(t, suite.userClient, "/pods"); code != http.StatusForbidden {
		t.Errorf("a user without nodes/proxy on /pods: %d %s, want 403", code, body)
	}
	code, body := kubeletGet(t, suite.apiClient, "/pods")
	var pods corev1.PodList
	if code != http.StatusOK || json.Unmarshal(body, &pods) != nil {
		t.Fatalf("/pods: %d %s", code, body)
	}
	found := false
	for _, p := range pods.Items {
		found = found || p.Name == "stats"
	}
	if !found {
		t.Errorf("/pods lacks the running pod")
	}
	var sum statsv1alpha1.Summary
	err := waitFor(t.Context(), 20*time.Second, func() (bool, error) {
		code, body := kubeletGet(t, suite.apiClient, "/stats/summary")
		if code != http.StatusOK || json.Unmarshal(body, &sum) != nil {
			return false, nil
		}
		for _, p := range sum.Pods {
			if p.PodRef.Name == "stats" && len(p.Containers) == 1 && p.Containers[0].Memory != nil {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("/stats/summary never showed the pod's container: %s", dump(sum))
	}
	if sum.Node.NodeName != suite.nodeName || sum.Node.Memory == nil {
		t.Errorf("node stats: %s", dump(sum.Node))
	}
	if code, body := kubeletGet(t, suite.apiClient, "/metrics"); code != http.StatusOK || !containsMetric(body, "trireme_kubelet_pod_start_duration_seconds") {
		t.Errorf("/metrics: %d", code)
	}
	// /metrics/resource is what metrics-server scrapes.
	// A scrape may fail while the runtime is busy (the kubelet logs why);
	// metrics-server takes the next one, and so does this test, saying so.
	_ = waitFor(t.Context(), 20*time.Second, func() (bool, error) {
		code, body = kubeletGet(t, suite.apiClient, "/metrics/resource")
		if code == http.StatusOK && containsMetric(body, "scrape_error 0") {
			return true, nil
		}
		t.Logf("/metrics/resource scrape failed (%d), scraping again", code)
		return false, nil
	})
	for _, want := range []string{"node_cpu_usage_seconds_total ", "node_memory_working_set_bytes ", `pod_memory_working_set_bytes{namespace="default",pod="stats"}`, `container_cpu_usage_seconds_total{container="app",namespace="default",pod="stats"}`, "scrape_error 0"} {
		if code != http.StatusOK || !containsMetric(body, want) {
			t.Errorf("/metrics/resource: %d, lacks %q:\n%s", code, want, body)
		}
	}
	// /logs/ is the node's /var/log, authorized as nodes/log.
	if code, body := kubeletGet(t, suite.userClient, "/logs/"); code != http.StatusForbidden {
		t.Errorf("a user without nodes/log on /logs/: %d %s, want 403", code, body)
	}
	if code, body := kubeletGet(t, suite.apiClient, "/logs/"); code != http.StatusOK || !containsMetric(body, "<pre>") {
		t.Errorf("/logs/: %d %s", code, body)
	}
	// Go's profiles (enableProfilingHandler), authorized as nodes/proxy.
	if code, body := kubeletGet(t, suite.userClient, "/debug/pprof/"); code != http.StatusForbidden {
		t.Errorf("a user without nodes/proxy on /debug/pprof/: %d %s, want 403", code, body)
	}
	if code, body := kubeletGet(t, suite.apiClient, "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !containsMetric(body, "goroutine profile:") {
		t.Errorf("/debug/pprof/goroutine: %d %.200s", code, body)
	}
}

func containsMetric(body []byte, name string) bool {
	return stringsContains(string(body), name)
}
