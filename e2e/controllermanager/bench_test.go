package controllermanager_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// cpuSeconds is the user+system CPU time process pid has used.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which may hold spaces, start at ")".
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}

// waitRolledOut waits until d in ns has every replica updated and
// available, as `kubectl rollout status` decides.
func waitRolledOut(ctx context.Context, cs kubernetes.Interface, ns, name string, replicas int32) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == replicas && s.Replicas == replicas && s.AvailableReplicas == replicas, nil
	})
}

// BenchmarkDeploymentRollout1000 rolls a 1,000-replica Deployment to a
// new image with the default 25% surge and unavailability, the harness
// making each pod ready as soon as it appears, and reports the rollout's
// wall time and the controller-manager's CPU time.
func BenchmarkDeploymentRollout1000(b *testing.B) {
	const replicas = 1000
	for b.Loop() {
		cs := srv.Clientset(b)
		ctx := context.Background()
		ns := newNamespace(b, cs, "bench-roll")
		startKubelet(b, cs, ns, running, nil)
		d := webDeployment("big", replicas, "registry.example/web:a", 0, 0)
		d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("25%"))
		d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
		start := time.Now()
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := waitRolledOut(ctx, cs, ns, "big", replicas); err != nil {
			b.Fatalf("initial rollout: %v", err)
		}
		created := time.Since(start)
		pid := srv.ControllerManagerPID()
		cpu0, _ := cpuSeconds(pid)
		start = time.Now()
		patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.example/web:b"}]}}}}`)
		if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "big", "application/strategic-merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := waitRolledOut(ctx, cs, ns, "big", replicas); err != nil {
			b.Fatalf("rollout: %v", err)
		}
		rollout := time.Since(start)
		cpu1, _ := cpuSeconds(pid)
		b.ReportMetric(created.Seconds(), "create-s")
		b.ReportMetric(rollout.Seconds(), "rollout-s")
		b.ReportMetric(cpu1-cpu0, "cm-cpu-s")
		fmt.Printf("deployment of %d: created and available in %s; rolled a→b in %s using %.1fs of controller-manager CPU\n",
			replicas, created.Round(time.Millisecond), rollout.Round(time.Millisecond), cpu1-cpu0)
	}
}
