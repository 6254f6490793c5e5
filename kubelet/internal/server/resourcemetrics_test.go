package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
)

func TestBusyNanoseconds(t *testing.T) {
	tests := []struct {
		line string
		want uint64
		ok   bool
	}{
		{"cpu  100 5 50 1000 20 3 2 1 0 0", 161 * 1e7, true},
		{"cpu  100 5 50 1000 20 3 2 1 7 7", 161 * 1e7, true},
		{"cpu0 1 2 3 4 5 6 7 8", 0, false},
		{"cpu 1 2", 0, false},
		{"cpu 1 x 3 4 5 6 7 8", 0, false},
	}
	for _, tt := range tests {
		got, ok := busyNanoseconds(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("busyNanoseconds(%q) = %d, %v; want %d, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestResourceMetricsAndLogs(t *testing.T) {
	rs := critesting.NewFakeRuntimeService()
	rs.SetFakeContainers([]*critesting.FakeContainer{{ContainerStatus: runtimeapi.ContainerStatus{Id: "c1", CreatedAt: 1_700_000_000_500_000_000, State: runtimeapi.ContainerState_CONTAINER_RUNNING, Labels: map[string]string{"io.kubernetes.pod.uid": "uid-1"}}}})
	rs.SetFakeContainerStats([]*runtimeapi.ContainerStats{{
		Attributes: &runtimeapi.ContainerAttributes{Id: "c1", Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Labels: map[string]string{"io.kubernetes.pod.uid": "uid-1"}},
		Cpu:        &runtimeapi.CpuUsage{Timestamp: 1, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 2_500_000_000}},
		Memory:     &runtimeapi.MemoryUsage{Timestamp: 1, WorkingSetBytes: &runtimeapi.UInt64Value{Value: 4096}},
	}})
	logDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logDir, "syslog"), []byte("hello from syslog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"}}
	h := Handler(Config{NodeName: "node-1", Runtime: rs, Pods: fakePods{[]*corev1.Pod{pod}}, RootDir: t.TempDir(), LogDir: logDir, Registry: prometheus.NewRegistry()})
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		b, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(b)
	}
	code, body := get("/metrics/resource")
	if code != http.StatusOK {
		t.Fatalf("/metrics/resource: %d %s", code, body)
	}
	for _, want := range []string{
		`container_cpu_usage_seconds_total{container="app",namespace="ns",pod="p"} 2.5`,
		`container_memory_working_set_bytes{container="app",namespace="ns",pod="p"} 4096`,
		`pod_cpu_usage_seconds_total{namespace="ns",pod="p"} 2.5`,
		`pod_memory_working_set_bytes{namespace="ns",pod="p"} 4096`,
		"node_cpu_usage_seconds_total ",
		"node_memory_working_set_bytes ",
		`container_start_time_seconds{container="app",namespace="ns",pod="p"} 1.7000000005e+09 1700000000500`,
		"scrape_error 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics/resource lacks %q:\n%s", want, body)
		}
	}
	if code, body := get("/logs/syslog"); code != http.StatusOK || body != "hello from syslog\n" {
		t.Errorf("/logs/syslog: %d %q", code, body)
	}
	if code, body := get("/logs/"); code != http.StatusOK || !strings.Contains(body, "syslog") {
		t.Errorf("/logs/ listing: %d %q", code, body)
	}
	if code, _ := get("/logs/../../etc/passwd"); code == http.StatusOK {
		t.Errorf("/logs/ escaped its directory")
	}
}
