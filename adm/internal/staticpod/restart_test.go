package staticpod

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestRestart(t *testing.T) {
	cfg := config(t, t.TempDir())
	dir := cfg.Paths.ManifestsDir()
	for _, c := range []string{Etcd, APIServer, Scheduler} {
		if _, err := Write(cfg, c); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		component string
		want      bool
		health    string
	}{
		{Etcd, true, "http://127.0.0.1:2381/livez"},
		{APIServer, true, "https://10.0.0.2:6443/livez"},
		{Scheduler, true, "https://127.0.0.1:10259/livez"},
		{ControllerManager, false, ""},
	} {
		t.Run(tc.component, func(t *testing.T) {
			before, _ := Read(Path(dir, tc.component))
			pod, err := Restart(dir, tc.component, now)
			if err != nil {
				t.Fatal(err)
			}
			if (pod != nil) != tc.want {
				t.Fatalf("Restart wrote %v, want a pod: %v", pod != nil, tc.want)
			}
			if pod == nil {
				if _, err := os.Stat(Path(dir, tc.component)); !os.IsNotExist(err) {
					t.Errorf("a missing manifest was written")
				}
				return
			}
			after, err := Read(Path(dir, tc.component))
			if err != nil {
				t.Fatal(err)
			}
			if got := after.Annotations[RestartedAtAnnotation]; got != "2026-12-02T10:00:00Z" {
				t.Errorf("annotation %q", got)
			}
			delete(after.Annotations, RestartedAtAnnotation)
			if len(after.Annotations) == 0 {
				after.Annotations = nil
			}
			if before.String() != after.String() {
				t.Errorf("the manifest changed beyond the annotation:\n%v\n%v", before, after)
			}
			if e := HealthEndpoint(pod); e == nil || e.URL != tc.health {
				t.Errorf("health endpoint %+v, want %s", e, tc.health)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if HealthEndpoint(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{}}}}) != nil {
		t.Error("a pod without a probe has a health endpoint")
	}
}

func TestNewer(t *testing.T) {
	since := time.Date(2026, 12, 2, 10, 0, 0, 500, time.UTC)
	for _, tc := range []struct {
		name    string
		created []time.Time
		want    bool
	}{
		{"none", nil, false},
		{"old", []time.Time{since.Add(-time.Minute)}, false},
		{"same second", []time.Time{since.Truncate(time.Second)}, true},
		{"old and new", []time.Time{since.Add(-time.Minute), since.Add(time.Second)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs []*runtimeapi.Container
			for _, c := range tc.created {
				cs = append(cs, &runtimeapi.Container{CreatedAt: c.UnixNano()})
			}
			if got := newer(cs, since); got != tc.want {
				t.Errorf("newer = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEtcdSnapshotPod(t *testing.T) {
	cfg := config(t, "/r")
	pod, err := EtcdSnapshotPod(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	for flag, want := range map[string]string{"dir": "/r/var/lib/trireme/etcd-snapshots", "interval": "12h0m0s", "retention": "5", "node-name": "cp-1",
		"endpoint": "https://127.0.0.1:2379", "cert": "/r/etc/trireme/pki/etcd/healthcheck-client.crt"} {
		if got, _ := Flag(c.Command, flag); got != want {
			t.Errorf("--%s=%q, want %q", flag, got, want)
		}
	}
	if c.Image != "trireme.dev/etcd:v1.37.0-test" || c.Command[0] != "/usr/local/bin/trireme-etcd-snapshot" || !pod.Spec.HostNetwork {
		t.Errorf("container %s %v", c.Image, c.Command)
	}
	cfg.Cluster.Etcd.Local.Snapshots.Interval.Duration = 0
	if _, err := EtcdSnapshotPod(cfg); err == nil {
		t.Error("a pod with snapshots off")
	}
}

// TestUpgradeOrder: upgrade replaces every static pod a restart does, and
// the snapshot schedule, with the VIP manager before the apiserver.
func TestUpgradeOrder(t *testing.T) {
	want := append([]string{EtcdSnapshot}, RestartOrder...)
	slices.Sort(want)
	got := slices.Sorted(slices.Values(UpgradeOrder))
	if !slices.Equal(got, want) {
		t.Errorf("UpgradeOrder replaces %v, want %v", got, want)
	}
	if slices.Index(UpgradeOrder, VIPManager) > slices.Index(UpgradeOrder, APIServer) {
		t.Errorf("UpgradeOrder %v replaces the apiserver before the VIP manager that hands its address over", UpgradeOrder)
	}
	if slices.Index(UpgradeOrder, Etcd) > slices.Index(UpgradeOrder, APIServer) {
		t.Errorf("UpgradeOrder %v replaces the apiserver before etcd", UpgradeOrder)
	}
}
