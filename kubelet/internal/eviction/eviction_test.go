package eviction

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/utils/ptr"
)

func TestParseThresholds(t *testing.T) {
	tests := []struct {
		in      map[string]string
		obs     Observation
		met     bool
		wantErr bool
	}{
		{map[string]string{"memory.available": "100Mi"}, Observation{Available: 99 << 20, Capacity: 1 << 30}, true, false},
		{map[string]string{"memory.available": "100Mi"}, Observation{Available: 100 << 20, Capacity: 1 << 30}, false, false},
		{map[string]string{"nodefs.available": "10%"}, Observation{Available: 9, Capacity: 100}, true, false},
		{map[string]string{"nodefs.available": "10%"}, Observation{Available: 11, Capacity: 100}, false, false},
		{map[string]string{"nodefs.available": "110%"}, Observation{}, false, true},
		{map[string]string{"memory.available": "lots"}, Observation{}, false, true},
	}
	for _, tt := range tests {
		ts, err := ParseThresholds(tt.in)
		if (err != nil) != tt.wantErr {
			t.Fatalf("ParseThresholds(%v) err = %v", tt.in, err)
		}
		if err == nil && ts[0].Met(tt.obs) != tt.met {
			t.Errorf("%v met by %+v = %v, want %v", tt.in, tt.obs, !tt.met, tt.met)
		}
	}
}

func pod(name string, prio int32, memRequest string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec:       corev1.PodSpec{Priority: ptr.To(prio), Containers: []corev1.Container{{Name: "c"}}},
	}
	if memRequest != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memRequest)}
	}
	return p
}

func names(pods []*corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func TestRankMemory(t *testing.T) {
	static := pod("static", 0, "")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	pods := []*corev1.Pod{
		pod("within-request", 0, "100Mi"),     // uses 50Mi of 100Mi
		pod("high-prio-over", 1000, "10Mi"),   // over its request
		pod("low-prio-over-small", 0, "10Mi"), // 20Mi over
		pod("low-prio-over-big", 0, ""),       // 200Mi over (no request)
		pod("critical", systemCriticalPrio, ""),
		static,
	}
	usage := map[types.UID]PodUsage{
		"within-request": {Memory: 50 << 20}, "high-prio-over": {Memory: 300 << 20},
		"low-prio-over-small": {Memory: 30 << 20}, "low-prio-over-big": {Memory: 200 << 20},
		"critical": {Memory: 1 << 30}, "static": {Memory: 1 << 30},
	}
	got := names(Rank(MemoryAvailable, pods, usage))
	want := "low-prio-over-big,low-prio-over-small,high-prio-over,within-request"
	if got != want {
		t.Errorf("Rank = %s, want %s", got, want)
	}
}

func TestSynchronizePressureAndEviction(t *testing.T) {
	now := time.Unix(1000, 0)
	obs := map[Signal]Observation{
		MemoryAvailable: {Available: 1 << 30, Capacity: 4 << 30},
		NodeFsAvailable: {Available: 50, Capacity: 100},
		PIDAvailable:    {Available: 30000, Capacity: 32768},
	}
	thresholds, err := ParseThresholds(map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "pid.available": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	var evicted []string
	pods := []*corev1.Pod{pod("a", 0, "1Gi"), pod("b", 0, "")}
	m := New(Config{
		Thresholds:       thresholds,
		TransitionPeriod: time.Minute,
		Observe:          func(context.Context) (map[Signal]Observation, error) { return obs, nil },
		Pods:             func() []*corev1.Pod { return pods },
		Usage: func(context.Context) (map[types.UID]PodUsage, error) {
			return map[types.UID]PodUsage{"a": {Memory: 100 << 20}, "b": {Memory: 10 << 20}}, nil
		},
		Evict: func(uid types.UID, msg string) bool {
			evicted = append(evicted, string(uid)+": "+msg)
			return true
		},
		Now: func() time.Time { return now },
	}, logr.Discard())
	ctx := context.Background()
	if uid, err := m.Synchronize(ctx); err != nil || uid != "" {
		t.Fatalf("no pressure: evicted %q, %v", uid, err)
	}
	if mem, disk, pid := m.Pressure(); mem || disk || pid {
		t.Fatalf("pressure %v %v %v with nothing met", mem, disk, pid)
	}
	obs[MemoryAvailable] = Observation{Available: 50 << 20, Capacity: 4 << 30}
	obs[PIDAvailable] = Observation{Available: 500, Capacity: 32768}
	uid, err := m.Synchronize(ctx)
	if err != nil || uid != "b" {
		t.Fatalf("memory pressure evicted %q (%v), want b (over its request)", uid, err)
	}
	if !strings.Contains(evicted[0], "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi.") ||
		!strings.Contains(evicted[0], "Pod b was using 10Mi, request is 0") {
		t.Errorf("message %q", evicted[0])
	}
	if mem, disk, pid := m.Pressure(); !mem || disk || !pid {
		t.Errorf("pressure = %v %v %v, want memory and pid", mem, disk, pid)
	}
	// Cleared, but held for the transition period.
	obs[MemoryAvailable] = Observation{Available: 1 << 30, Capacity: 4 << 30}
	obs[PIDAvailable] = Observation{Available: 30000, Capacity: 32768}
	now = now.Add(30 * time.Second)
	if _, err := m.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	if mem, _, _ := m.Pressure(); !mem {
		t.Errorf("memory pressure dropped within the transition period")
	}
	now = now.Add(time.Minute)
	if mem, _, pid := m.Pressure(); mem || pid {
		t.Errorf("pressure held after the transition period")
	}
}

func TestImageFsPressureReclaimsBeforeEvicting(t *testing.T) {
	thresholds, _ := ParseThresholds(map[string]string{"imagefs.available": "15%"})
	evicted := 0
	var asked int64
	m := New(Config{
		Thresholds: thresholds, TransitionPeriod: time.Minute,
		Observe: func(context.Context) (map[Signal]Observation, error) {
			return map[Signal]Observation{ImageFsAvailable: {Available: 10, Capacity: 100}}, nil
		},
		Pods:  func() []*corev1.Pod { return []*corev1.Pod{pod("a", 0, "")} },
		Usage: func(context.Context) (map[types.UID]PodUsage, error) { return nil, nil },
		Evict: func(types.UID, string) bool { evicted++; return true },
		ReclaimImages: func(_ context.Context, bytes int64) (int64, error) {
			asked = bytes
			return bytes, nil
		},
	}, logr.Discard())
	if _, err := m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if asked != 5 || evicted != 0 {
		t.Errorf("asked to free %d (want 5), evicted %d (want 0)", asked, evicted)
	}
	if _, disk, _ := m.Pressure(); !disk {
		t.Errorf("no DiskPressure under imagefs threshold")
	}
}

func TestImageGC(t *testing.T) {
	rs := critesting.NewFakeRuntimeService()
	is := critesting.NewFakeImageService()
	is.FakeImageSize = 40
	is.Pinned = map[string]bool{"pinned": true}
	// The sandbox image is in use by no container, and not marked pinned
	// (containerd 1.6), but named in the runtime's config.
	// "mounted" is shown by an image volume.
	is.SetFakeImages([]string{"used", "old", "new", "pinned", "trireme.dev/pause:1", "mounted"})
	rs.SetFakeContainers([]*critesting.FakeContainer{{ContainerStatus: runtimeapi.ContainerStatus{Id: "c", Image: &runtimeapi.ImageSpec{Image: "used"}, ImageRef: "used"}}})
	now := time.Unix(1000, 0)
	avail := int64(10)
	gc := &ImageGC{
		Runtime: runtimeConfig{rs, `{"sandboxImage":"trireme.dev/pause:1"}`}, Images: is, HighPercent: 85, LowPercent: 80, MinAge: time.Minute, Log: logr.Discard(),
		ImageFs: func(context.Context) (Observation, error) { return Observation{Available: avail, Capacity: 100}, nil },
		Now:     func() time.Time { return now },

		VolumeImages: func(context.Context) ([]string, error) { return []string{"mounted"}, nil },
	}
	ctx := context.Background()
	// Everything is younger than MinAge: nothing removed, and the
	// shortfall reported.
	if err := gc.GarbageCollect(ctx); err == nil {
		t.Errorf("no error though nothing could be freed")
	}
	now = now.Add(2 * time.Minute)
	if err := gc.GarbageCollect(ctx); err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for id := range is.Images {
		left[id] = true
	}
	if !left["used"] || !left["pinned"] || !left["trireme.dev/pause:1"] || !left["mounted"] || len(left) != 5 {
		t.Errorf("images left %v: want used, pinned, the sandbox image, the mounted one and one of the unused (10 bytes needed, 40 each)", left)
	}
	// Below the high threshold nothing is removed.
	avail = 50
	if err := gc.GarbageCollect(ctx); err != nil || len(is.Images) != 5 {
		t.Errorf("GC below threshold: %v, %d images", err, len(is.Images))
	}
	// Everything that can go goes; the sandbox image stays.
	avail = 0
	_ = gc.GarbageCollect(ctx)
	if _, ok := is.Images["mounted"]; !ok || len(is.Images) != 4 {
		t.Errorf("images left after freeing all: %v", is.Images)
	}
}

// runtimeConfig is a runtime whose verbose status carries config, as
// containerd's CRI reports its configuration.
type runtimeConfig struct {
	*critesting.FakeRuntimeService
	config string
}

func (r runtimeConfig) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	st, err := r.FakeRuntimeService.Status(ctx, verbose)
	if err != nil || !verbose {
		return st, err
	}
	st.Info = map[string]string{"config": r.config}
	return st, nil
}

func TestHostObservations(t *testing.T) {
	proc := t.TempDir()
	must := func(path, content string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(proc, "meminfo"), "MemTotal:       2048 kB\nMemFree:        100 kB\nMemAvailable:    1024 kB\n")
	must(filepath.Join(proc, "sys/kernel/pid_max"), "32768\n")
	must(filepath.Join(proc, "loadavg"), "0.1 0.2 0.3 2/768 999\n")
	obs, err := HostObserver{RootDir: t.TempDir(), Proc: proc}.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if obs[MemoryAvailable] != (Observation{Available: 1 << 20, Capacity: 2 << 20}) {
		t.Errorf("memory %+v", obs[MemoryAvailable])
	}
	if obs[PIDAvailable] != (Observation{Available: 32000, Capacity: 32768}) {
		t.Errorf("pids %+v", obs[PIDAvailable])
	}
	if o := obs[NodeFsAvailable]; o.Capacity == 0 || o.Available > o.Capacity || obs[ImageFsAvailable] != o {
		t.Errorf("nodefs %+v imagefs %+v", o, obs[ImageFsAvailable])
	}
}
