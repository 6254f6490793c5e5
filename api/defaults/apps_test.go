package defaults

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Expected values: upstream pkg/apis/apps/v1/defaults.go (SetDefaults_
// Deployment, _DaemonSet, _StatefulSet, _ReplicaSet) and the nested pod and
// claim defaults its zz_generated.defaults.go calls.

// template is a pod template with one container, and defaultedTemplate the
// same template after pod spec defaulting (no Pod-only defaults).
func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

func defaultedTemplate() corev1.PodTemplateSpec {
	t := template()
	t.Spec = defaultedSpec(corev1.PodSpec{Containers: []corev1.Container{defaultedContainer("web", "nginx:1.27", corev1.PullIfNotPresent)}})
	return t
}

func TestDeployment(t *testing.T) {
	runDefaulting(t, Deployment, []defaultingCase[appsv1.Deployment]{
		{
			name: "empty spec",
			in:   &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: template()}},
			want: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
				Replicas: new(int32(1)),
				Template: defaultedTemplate(),
				// RollingUpdate 25%/25%.
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: new(intstr.FromString("25%")), MaxSurge: new(intstr.FromString("25%")),
				}},
				RevisionHistoryLimit:    new(int32(10)),
				ProgressDeadlineSeconds: new(int32(600)),
			}},
		},
		{
			name: "recreate strategy gets no rolling update block",
			in:   &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: new(int32(0)), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}},
			want: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
				Replicas:                new(int32(0)),
				Template:                corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{})},
				Strategy:                appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
				RevisionHistoryLimit:    new(int32(10)),
				ProgressDeadlineSeconds: new(int32(600)),
			}},
		},
		{
			name: "partial rolling update is completed",
			in: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: new(intstr.FromInt32(0))},
			}}},
			want: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
				Replicas: new(int32(1)),
				Template: corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{})},
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: new(intstr.FromString("25%")), MaxSurge: new(intstr.FromInt32(0)),
				}},
				RevisionHistoryLimit:    new(int32(10)),
				ProgressDeadlineSeconds: new(int32(600)),
			}},
		},
	})
}

func TestReplicaSet(t *testing.T) {
	runDefaulting(t, ReplicaSet, []defaultingCase[appsv1.ReplicaSet]{
		{
			name: "one replica",
			in:   &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: template()}},
			want: &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(1)), Template: defaultedTemplate()}},
		},
	})
}

func TestDaemonSet(t *testing.T) {
	runDefaulting(t, DaemonSet, []defaultingCase[appsv1.DaemonSet]{
		{
			name: "rolling update one at a time",
			in:   &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: template()}},
			want: &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{
				Template: defaultedTemplate(),
				// maxUnavailable 1 and maxSurge 0, as integers.
				UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{
					MaxUnavailable: new(intstr.FromInt32(1)), MaxSurge: new(intstr.FromInt32(0)),
				}},
				RevisionHistoryLimit: new(int32(10)),
			}},
		},
		{
			name: "on delete strategy",
			in:   &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}},
			want: &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{
				Template:             corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{})},
				UpdateStrategy:       appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
				RevisionHistoryLimit: new(int32(10)),
			}},
		},
	})
}

func TestStatefulSet(t *testing.T) {
	retain := &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	runDefaulting(t, StatefulSet, []defaultingCase[appsv1.StatefulSet]{
		{
			name: "empty spec with claim template",
			in: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
				Template: template(),
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					}},
				}},
			}},
			want: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
				Replicas:            new(int32(1)),
				Template:            defaultedTemplate(),
				PodManagementPolicy: appsv1.OrderedReadyPodManagement,
				// partition 0; maxUnavailable 1 (MaxUnavailableStatefulSet, beta since 1.35).
				UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
					Partition: new(int32(0)), MaxUnavailable: new(intstr.FromInt32(1)),
				}},
				RevisionHistoryLimit:                 new(int32(10)),
				PersistentVolumeClaimRetentionPolicy: retain,
				// SetDefaults_PersistentVolumeClaim(+Spec) on each claim template.
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						Resources:  corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
						VolumeMode: new(corev1.PersistentVolumeFilesystem),
					},
					Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
				}},
			}},
		},
		{
			// Upstream only fills a RollingUpdate block it created or was sent.
			name: "explicit rolling update type without block stays without",
			in: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
				PodManagementPolicy: appsv1.ParallelPodManagement,
				UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
				PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
					WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				},
			}},
			want: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
				Replicas:            new(int32(1)),
				Template:            corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{})},
				PodManagementPolicy: appsv1.ParallelPodManagement,
				UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
				PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
					WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
					WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
				},
				RevisionHistoryLimit: new(int32(10)),
			}},
		},
		{
			name: "on delete strategy",
			in:   &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}},
			want: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
				Replicas:                             new(int32(1)),
				Template:                             corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{})},
				PodManagementPolicy:                  appsv1.OrderedReadyPodManagement,
				UpdateStrategy:                       appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
				RevisionHistoryLimit:                 new(int32(10)),
				PersistentVolumeClaimRetentionPolicy: retain,
			}},
		},
	})
}
