package defaults

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Deployment sets one replica, a RollingUpdate strategy allowing 25% of the
// pods to be unavailable and 25% extra during a rollout, ten kept revisions,
// a ten-minute progress deadline, and the template's pod spec defaults.
func Deployment(d *appsv1.Deployment) {
	spec := &d.Spec
	if spec.Replicas == nil {
		spec.Replicas = new(int32(1))
	}
	if spec.Strategy.Type == "" {
		spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if spec.Strategy.RollingUpdate == nil {
			spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		ru := spec.Strategy.RollingUpdate
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = new(intstr.FromString("25%"))
		}
		if ru.MaxSurge == nil {
			ru.MaxSurge = new(intstr.FromString("25%"))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = new(int32(10))
	}
	if spec.ProgressDeadlineSeconds == nil {
		spec.ProgressDeadlineSeconds = new(int32(600))
	}
	podTemplateSpec(&spec.Template)
}

// ReplicaSet sets one replica and the template's pod spec defaults.
func ReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = new(int32(1))
	}
	podTemplateSpec(&rs.Spec.Template)
}

// DaemonSet sets a RollingUpdate strategy replacing one node's pod at a time
// without surge, ten kept revisions, and the template's pod spec defaults.
func DaemonSet(ds *appsv1.DaemonSet) {
	strategy := &ds.Spec.UpdateStrategy
	if strategy.Type == "" {
		strategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if strategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if strategy.RollingUpdate == nil {
			strategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if strategy.RollingUpdate.MaxUnavailable == nil {
			strategy.RollingUpdate.MaxUnavailable = new(intstr.FromInt32(1))
		}
		if strategy.RollingUpdate.MaxSurge == nil {
			strategy.RollingUpdate.MaxSurge = new(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = new(int32(10))
	}
	podTemplateSpec(&ds.Spec.Template)
}

// StatefulSet sets ordered pod management, a RollingUpdate strategy from
// ordinal 0 one pod at a time, claims retained on deletion and scale-down,
// one replica, ten kept revisions, and the defaults of the pod template and
// of each claim template.
func StatefulSet(ss *appsv1.StatefulSet) {
	spec := &ss.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	strategy := &spec.UpdateStrategy
	if strategy.Type == "" {
		strategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if strategy.RollingUpdate == nil {
			strategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	// Only a RollingUpdate block the user or the line above created is
	// filled: an explicit RollingUpdate type without one stays as sent.
	if strategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && strategy.RollingUpdate != nil {
		if strategy.RollingUpdate.Partition == nil {
			strategy.RollingUpdate.Partition = new(int32(0))
		}
		// MaxUnavailableStatefulSet is beta and on by default since 1.35.
		if strategy.RollingUpdate.MaxUnavailable == nil {
			strategy.RollingUpdate.MaxUnavailable = new(intstr.FromInt32(1))
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	retention := spec.PersistentVolumeClaimRetentionPolicy
	if retention.WhenDeleted == "" {
		retention.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if retention.WhenScaled == "" {
		retention.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = new(int32(1))
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = new(int32(10))
	}
	podTemplateSpec(&spec.Template)
	for i := range spec.VolumeClaimTemplates {
		// Claim templates are defaulted as whole claims, status phase
		// Pending included: that is how upstream stores and returns them.
		PersistentVolumeClaim(&spec.VolumeClaimTemplates[i])
	}
}
