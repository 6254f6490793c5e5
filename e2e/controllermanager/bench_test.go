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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"
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
// wall time and the controller-manager's CPU time: once with upstream's
// default client rate limit (20 requests/s a controller, which bounds the
// rollout at about 2,000 pod writes / 20 = 100 s), once with 200.
func BenchmarkDeploymentRollout1000(b *testing.B) {
	b.Run("qps=20", func(b *testing.B) { benchRollout(b, srv) })
	b.Run("qps=200", func(b *testing.B) {
		s := testcluster.StartAPIServer(b, testcluster.APIServerOptions{
			ControllerManager:     true,
			ControllerManagerArgs: []string{"--kube-api-qps=200", "--kube-api-burst=400"},
		})
		benchRollout(b, s)
	})
}

func benchRollout(b *testing.B, s *testcluster.APIServer) {
	const replicas = 1000
	for b.Loop() {
		cs := s.Clientset(b)
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
		pid := s.ControllerManagerPID()
		cpu0, _ := cpuSeconds(pid)
		start = time.Now()
		patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.example/web:b"}]}}}}`)
		if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "big", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
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
		fmt.Printf("%s: deployment of %d created and available in %s; rolled a→b in %s using %.1fs of controller-manager CPU\n",
			b.Name(), replicas, created.Round(time.Millisecond), rollout.Round(time.Millisecond), cpu1-cpu0)
	}
}
