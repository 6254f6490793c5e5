package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
)

// TestWorkerCountFlags checks every per-controller worker count the
// controllers here honour: upstream's default, the flag reaching its field,
// and zero or negative values refused with the flag named.
func TestWorkerCountFlags(t *testing.T) {
	type cfg = kcmconfig.KubeControllerManagerConfiguration
	flags := []struct {
		flag  string
		def   int32
		field func(c *cfg) int32
	}{
		{"concurrent-deployment-syncs", 5, func(c *cfg) int32 { return c.DeploymentController.ConcurrentDeploymentSyncs }},
		{"concurrent-replicaset-syncs", 5, func(c *cfg) int32 { return c.ReplicaSetController.ConcurrentRSSyncs }},
		{"concurrent-rc-syncs", 5, func(c *cfg) int32 { return c.ReplicationController.ConcurrentRCSyncs }},
		{"concurrent-statefulset-syncs", 5, func(c *cfg) int32 { return c.StatefulSetController.ConcurrentStatefulSetSyncs }},
		{"concurrent-daemonset-syncs", 2, func(c *cfg) int32 { return c.DaemonSetController.ConcurrentDaemonSetSyncs }},
		{"concurrent-job-syncs", 5, func(c *cfg) int32 { return c.JobController.ConcurrentJobSyncs }},
		{"concurrent-cron-job-syncs", 5, func(c *cfg) int32 { return c.CronJobController.ConcurrentCronJobSyncs }},
		{"concurrent-ttl-after-finished-syncs", 5, func(c *cfg) int32 { return c.TTLAfterFinishedController.ConcurrentTTLSyncs }},
		{"concurrent-disruption-syncs", 1, func(c *cfg) int32 { return c.DisruptionController.ConcurrentDisruptionSyncs }},
		{"concurrent-service-endpoint-syncs", 5, func(c *cfg) int32 { return c.EndpointSliceController.ConcurrentServiceEndpointSyncs }},
		{"concurrent-endpoint-syncs", 5, func(c *cfg) int32 { return c.EndpointController.ConcurrentEndpointSyncs }},
		{"mirroring-concurrent-service-endpoint-syncs", 5, func(c *cfg) int32 {
			return c.EndpointSliceMirroringController.MirroringConcurrentServiceEndpointSyncs
		}},
		{"concurrent-gc-syncs", 20, func(c *cfg) int32 { return c.GarbageCollectorController.ConcurrentGCSyncs }},
		{"concurrent-namespace-syncs", 10, func(c *cfg) int32 { return c.NamespaceController.ConcurrentNamespaceSyncs }},
		{"concurrent-resource-quota-syncs", 5, func(c *cfg) int32 { return c.ResourceQuotaController.ConcurrentResourceQuotaSyncs }},
		{"concurrent-horizontal-pod-autoscaler-syncs", 5, func(c *cfg) int32 { return c.HPAController.ConcurrentHorizontalPodAutoscalerSyncs }},
		{"concurrent-ephemeralvolume-syncs", 5, func(c *cfg) int32 { return c.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs }},
	}
	parse := func(t *testing.T, args ...string) (*Options, string) {
		t.Helper()
		o := New(nil)
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs, known)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, err := range o.Validate(known) {
			msgs = append(msgs, err.Error())
		}
		return o, strings.Join(msgs, "; ")
	}
	for _, f := range flags {
		t.Run(f.flag+"/default", func(t *testing.T) {
			o, errs := parse(t)
			if errs != "" {
				t.Fatalf("defaults refused: %s", errs)
			}
			if got := f.field(o.Config); got != f.def {
				t.Errorf("default %d, want upstream's %d", got, f.def)
			}
		})
		t.Run(f.flag+"/set", func(t *testing.T) {
			o, errs := parse(t, "--"+f.flag+"=7")
			if errs != "" {
				t.Fatalf("refused: %s", errs)
			}
			if got := f.field(o.Config); got != 7 {
				t.Errorf("got %d, want 7", got)
			}
		})
		for _, v := range []string{"0", "-1"} {
			t.Run(f.flag+"/refuses "+v, func(t *testing.T) {
				_, errs := parse(t, "--"+f.flag+"="+v)
				if !strings.Contains(errs, "--"+f.flag+" must be positive") {
					t.Errorf("errors %q do not refuse --%s", errs, f.flag)
				}
			})
		}
	}
}
