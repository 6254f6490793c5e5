package options

import (
	"fmt"

	"github.com/spf13/pflag"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
)

// workerCount is one controller's worker-count flag: its upstream name,
// the config field it sets, upstream's default and what one worker syncs.
type workerCount struct {
	flag  string
	field *int32
	def   int32
	what  string
}

// workloadWorkerCounts are the worker counts of the workload and
// disruption controllers, named and defaulted as kube-controller-manager's.
func workloadWorkerCounts(cfg *kcmconfig.KubeControllerManagerConfiguration) []workerCount {
	return []workerCount{
		{"concurrent-deployment-syncs", &cfg.DeploymentController.ConcurrentDeploymentSyncs, 5, "Deployments"},
		{"concurrent-replicaset-syncs", &cfg.ReplicaSetController.ConcurrentRSSyncs, 5, "ReplicaSets"},
		{"concurrent-rc-syncs", &cfg.ReplicationController.ConcurrentRCSyncs, 5, "ReplicationControllers"},
		{"concurrent-statefulset-syncs", &cfg.StatefulSetController.ConcurrentStatefulSetSyncs, 5, "StatefulSets"},
		{"concurrent-daemonset-syncs", &cfg.DaemonSetController.ConcurrentDaemonSetSyncs, 2, "DaemonSets"},
		{"concurrent-job-syncs", &cfg.JobController.ConcurrentJobSyncs, 5, "Jobs"},
		{"concurrent-cron-job-syncs", &cfg.CronJobController.ConcurrentCronJobSyncs, 5, "CronJobs"},
		{"concurrent-ttl-after-finished-syncs", &cfg.TTLAfterFinishedController.ConcurrentTTLSyncs, 5, "finished Jobs whose time to live is checked"},
		{"concurrent-disruption-syncs", &cfg.DisruptionController.ConcurrentDisruptionSyncs, 1, "PodDisruptionBudgets"},
	}
}

// addWorkloadFlags registers the workload controllers' worker counts.
func addWorkloadFlags(fs *pflag.FlagSet, cfg *kcmconfig.KubeControllerManagerConfiguration) {
	for _, w := range workloadWorkerCounts(cfg) {
		fs.Int32Var(w.field, w.flag, *w.field, w.what+" synced at once.")
	}
}

// setWorkloadDefaults applies upstream's worker counts to those cfg leaves
// at zero.
func setWorkloadDefaults(cfg *kcmconfig.KubeControllerManagerConfiguration) {
	for _, w := range workloadWorkerCounts(cfg) {
		if *w.field == 0 {
			*w.field = w.def
		}
	}
}

// validateWorkloads reports worker counts that are not positive.
func validateWorkloads(cfg *kcmconfig.KubeControllerManagerConfiguration) []error {
	var errs []error
	for _, w := range workloadWorkerCounts(cfg) {
		if *w.field <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive, got %d", w.flag, *w.field))
		}
	}
	return errs
}
