package podcgroup

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func container(cpuReq, cpuLim, memReq, memLim string) corev1.Container {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, e := range []struct {
		list corev1.ResourceList
		name corev1.ResourceName
		v    string
	}{{r.Requests, corev1.ResourceCPU, cpuReq}, {r.Limits, corev1.ResourceCPU, cpuLim}, {r.Requests, corev1.ResourceMemory, memReq}, {r.Limits, corev1.ResourceMemory, memLim}} {
		if e.v != "" {
			e.list[e.name] = resource.MustParse(e.v)
		}
	}
	return corev1.Container{Name: "c", Resources: r}
}

func TestFor(t *testing.T) {
	tests := []struct {
		name       string
		containers []corev1.Container
		want       Values
	}{
		{"best effort", []corev1.Container{container("", "", "", "")}, Values{CPUShares: 2}},
		{"guaranteed", []corev1.Container{container("100m", "100m", "64Mi", "64Mi"), container("50m", "50m", "32Mi", "32Mi")},
			Values{CPUShares: 153, CPUQuota: 15000, Memory: 96 << 20}},
		{"burstable, cpu limits on every container", []corev1.Container{container("100m", "200m", "64Mi", ""), container("50m", "100m", "", "")},
			Values{CPUShares: 153, CPUQuota: 30000}},
		{"burstable, one container without limits", []corev1.Container{container("100m", "200m", "64Mi", "128Mi"), container("50m", "", "", "")},
			Values{CPUShares: 153}},
		{"tiny quota is the minimum", []corev1.Container{container("1m", "1m", "", "")}, Values{CPUShares: 2, CPUQuota: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: tt.containers}}
			if got := For(pod); got != tt.want {
				t.Errorf("For = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMax(t *testing.T) {
	got := Max(Values{CPUShares: 10, CPUQuota: 5000, Memory: 100}, Values{CPUShares: 20, CPUQuota: 3000})
	if want := (Values{CPUShares: 20, CPUQuota: 5000}); got != want {
		t.Errorf("Max = %+v, want %+v", got, want)
	}
}

func TestWrite(t *testing.T) {
	tests := []struct {
		name    string
		unified bool
		v       Values
		want    map[string]string
	}{
		{"v1 limited", false, Values{CPUShares: 153, CPUQuota: 15000, Memory: 1 << 20}, map[string]string{
			"cpu/p/cpu.shares": "153", "cpu/p/cpu.cfs_period_us": "100000", "cpu/p/cpu.cfs_quota_us": "15000", "memory/p/memory.limit_in_bytes": "1048576"}},
		{"v1 unlimited", false, Values{CPUShares: 2}, map[string]string{
			"cpu/p/cpu.shares": "2", "cpu/p/cpu.cfs_quota_us": "-1", "memory/p/memory.limit_in_bytes": "-1"}},
		{"v2", true, Values{CPUShares: 1024, CPUQuota: 50000}, map[string]string{
			"p/cpu.weight": "39", "p/cpu.max": "50000 100000", "p/memory.max": "max"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{"cpu/p", "memory/p", "p"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := (Writer{Root: root, Unified: tt.unified}).Write("/p", tt.v); err != nil {
				t.Fatal(err)
			}
			for file, want := range tt.want {
				b, err := os.ReadFile(filepath.Join(root, file))
				if err != nil || string(b) != want {
					t.Errorf("%s = %q (%v), want %q", file, b, err, want)
				}
			}
		})
	}
}
