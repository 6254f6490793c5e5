package scale

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/kwok"
)

// The knobs, as flags (go test ./e2e/scale/ -args -nodes 1000) or as the
// environment variables make bench-scale sets; the defaults are the small
// run the test exercises.
var (
	flagNodes      = flag.Int("nodes", envInt("SCALE_NODES", 100), "fake nodes (SCALE_NODES)")
	flagPods       = flag.Int("pods", envInt("SCALE_PODS", 3000), "pods, 100 per Deployment (SCALE_PODS)")
	flagNamespaces = flag.Int("namespaces", envInt("SCALE_NAMESPACES", 10), "namespaces the Deployments spread across (SCALE_NAMESPACES)")
	flagWatchers   = flag.Int("watchers", envInt("SCALE_WATCHERS", 100), "clients each watching every pod (SCALE_WATCHERS)")
	flagPlanes     = flag.String("control-planes", envString("SCALE_CONTROL_PLANES", "trireme"), "comma-separated control planes to measure in turn: trireme, upstream (SCALE_CONTROL_PLANES)")
	flagUpstream   = flag.String("upstream-dir", envString("SCALE_UPSTREAM_DIR", filepath.Join(testcluster.RepoRoot(), "_output", "upstream")), "directory of hack/build-upstream.sh's binaries (SCALE_UPSTREAM_DIR)")
	flagKwok       = flag.String("kwok", envString("SCALE_KWOK", filepath.Join(testcluster.RepoRoot(), "_output", "bin", "kwok")), "kwok binary from make kwok, with "+kwok.StagesFile+" beside it (SCALE_KWOK)")
	flagTimeout    = flag.Duration("stage-timeout", envDuration("SCALE_STAGE_TIMEOUT", 10*time.Minute), "how long one stage may take (SCALE_STAGE_TIMEOUT)")
	flagQPS        = flag.Float64("client-qps", 100, "scheduler and controller-manager client QPS")
	flagBurst      = flag.Int("client-burst", 200, "scheduler and controller-manager client burst")
)

func envString(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return n
	}
	return def
}

func envDuration(k string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(k)); err == nil {
		return d
	}
	return def
}

// TestScale brings up each control plane in turn, runs the workload at the
// size the knobs give, and prints the figures. It fails only when a stage
// does not finish: the figures are for reading, not asserting.
//
// It is opt-in (TRIREME_E2E_SCALE=1, as make bench-scale sets): even the
// small run takes minutes, too long for make check.
func TestScale(t *testing.T) {
	if os.Getenv("TRIREME_E2E_SCALE") != "1" {
		t.Skip("e2e/scale: opt-in (minutes of load on this machine); set TRIREME_E2E_SCALE=1 or run make bench-scale")
	}
	stages, err := kwok.Locate(*flagKwok)
	if err != nil {
		t.Fatalf("%v (or set SCALE_KWOK)", err)
	}
	settings := Settings{
		GOGC: os.Getenv("GOGC"), GOMEMLIMIT: os.Getenv("GOMEMLIMIT"),
		QPS: float32(*flagQPS), Burst: int32(*flagBurst),
		PercentageOfNodesToScore: 0, NodeMonitorGracePeriod: 50 * time.Second,
	}
	size := Scaled(*flagNodes, *flagPods, *flagNamespaces)
	size.Watchers = *flagWatchers
	for _, plane := range strings.Split(*flagPlanes, ",") {
		t.Run(plane, func(t *testing.T) {
			ctx := context.Background()
			start := time.Now()
			cp, err := StartControlPlane(ctx, Flavour(plane), settings, *flagUpstream)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := cp.Close(); err != nil {
					t.Errorf("stop %s control plane: %v", plane, err)
				}
			}()
			t.Logf("%s control plane up in %s, pids %v", plane, time.Since(start).Round(time.Millisecond), cp.PIDs)
			run := &Run{CP: cp, Size: size, Kwok: *flagKwok, Stages: stages, Timeout: *flagTimeout, Log: t.Logf}
			fig, err := run.Execute(ctx)
			fig.Print(os.Stdout, Flavour(plane), size, settings)
			if err != nil {
				t.Fatalf("%v\ncontrol plane log (last lines):\n%s", err, cp.LogTail(60))
			}
		})
	}
}
