package validation

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var webLabels = map[string]string{"app": "web"}

func validDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: meta("web"),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: webLabels},
			Template: validTemplate(webLabels),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr(intstr.FromString("25%")), MaxUnavailable: ptr(intstr.FromString("25%"))}},
			RevisionHistoryLimit:    ptr[int32](10),
			ProgressDeadlineSeconds: ptr[int32](600),
		},
	}
}

func TestDeployment(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(d *appsv1.Deployment)
		want   []want
	}{
		{"valid", func(d *appsv1.Deployment) {}, nil},
		{"selector required", func(d *appsv1.Deployment) { d.Spec.Selector = nil }, []want{required("spec.selector")}},
		{"empty selector", func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }, []want{invalid("spec.selector")}},
		{"selector must match template", func(d *appsv1.Deployment) { d.Spec.Template.Labels = map[string]string{"app": "other"} }, []want{invalid("spec.template.metadata.labels")}},
		{"negative replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr[int32](-1) }, []want{invalid("spec.replicas")}},
		{"template restartPolicy Always", func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }, []want{notSup("spec.template.spec.restartPolicy")}},
		{"template container errors nest", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Name = "" }, []want{required("spec.template.spec.containers[0].name")}},
		{"strategy enum", func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "BlueGreen" }, []want{notSup("spec.strategy.type")}},
		{"recreate with rolling params", func(d *appsv1.Deployment) { d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType }, []want{forbidden("spec.strategy.rollingUpdate")}},
		{"both zero", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromInt32(0)), MaxUnavailable: ptr(intstr.FromString("0%"))}
		}, []want{invalid("spec.strategy.rollingUpdate.maxUnavailable")}},
		{"percent over 100 and garbage", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromString("lots")), MaxUnavailable: ptr(intstr.FromString("150%"))}
		}, []want{invalid("spec.strategy.rollingUpdate.maxSurge"), invalid("spec.strategy.rollingUpdate.maxUnavailable")}},
		{"progress deadline not above minReady", func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 600 }, []want{invalid("spec.progressDeadlineSeconds")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeployment()
			tc.mutate(d)
			expectErrs(t, ValidateCreate(d), tc.want...)
		})
	}
	t.Run("selector immutable", func(t *testing.T) {
		old, d := validDeployment(), validDeployment()
		stored(&old.ObjectMeta)
		stored(&d.ObjectMeta)
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "fe"}}
		d.Spec.Template.Labels = map[string]string{"app": "web", "tier": "fe"}
		expectErrs(t, ValidateUpdate(d, old), invalid("spec.selector"))
	})
	t.Run("status counters", func(t *testing.T) {
		old, d := validDeployment(), validDeployment()
		stored(&old.ObjectMeta)
		stored(&d.ObjectMeta)
		old.Status.CollisionCount = ptr[int32](2)
		d.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 2, AvailableReplicas: 1, CollisionCount: ptr[int32](1)}
		expectErrs(t, ValidateStatusUpdate(d, old), invalid("status.readyReplicas"), invalid("status.collisionCount"))
	})
}

func TestReplicaSetAndRC(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: meta("web"), Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr[int32](1), Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: validTemplate(webLabels)}}
	t.Run("replicaset valid", func(t *testing.T) { expectErrs(t, ValidateCreate(rs)) })
	t.Run("replicaset deadline forbidden", func(t *testing.T) {
		bad := rs.DeepCopy()
		bad.Spec.Template.Spec.ActiveDeadlineSeconds = ptr[int64](10)
		expectErrs(t, ValidateCreate(bad), forbidden("spec.template.spec.activeDeadlineSeconds"))
	})
	rc := &corev1.ReplicationController{ObjectMeta: meta("web"), Spec: corev1.ReplicationControllerSpec{
		Replicas: ptr[int32](1), Selector: webLabels, Template: ptr(validTemplate(webLabels))}}
	t.Run("rc valid", func(t *testing.T) { expectErrs(t, ValidateCreate(rc)) })
	t.Run("rc selector required and template", func(t *testing.T) {
		bad := rc.DeepCopy()
		bad.Spec.Selector = nil
		bad.Spec.Template = nil
		expectErrs(t, ValidateCreate(bad), required("spec.selector"), required("spec.template"))
	})
	t.Run("rc selector mismatch", func(t *testing.T) {
		bad := rc.DeepCopy()
		bad.Spec.Selector = map[string]string{"app": "db"}
		expectErrs(t, ValidateCreate(bad), invalid("spec.template.metadata.labels"))
	})
}

func validStatefulSet() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: meta("db"),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr[int32](3),
			Selector:            &metav1.LabelSelector{MatchLabels: webLabels},
			Template:            validTemplate(webLabels),
			ServiceName:         "db",
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr[int32](0)}},
			RevisionHistoryLimit: ptr[int32](10),
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: validPVCSpec()}},
		},
	}
}

func TestStatefulSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *appsv1.StatefulSet)
		want   []want
	}{
		{"valid", func(s *appsv1.StatefulSet) {}, nil},
		{"pod management enum", func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Random" }, []want{notSup("spec.podManagementPolicy")}},
		{"OnDelete with rolling params", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }, []want{invalid("spec.updateStrategy.rollingUpdate")}},
		{"negative partition", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr[int32](-1) }, []want{invalid("spec.updateStrategy.rollingUpdate.partition")}},
		{"mount of claim template", func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}, nil},
		{"mount of unknown volume", func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/logs"}}
		}, []want{notFound("spec.template.spec.containers[0].volumeMounts[0].name")}},
		{"claim template spec", func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Spec.AccessModes = nil }, []want{required("spec.volumeClaimTemplates[0].spec.accessModes")}},
		{"retention enum", func(s *appsv1.StatefulSet) { s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = "Keep" }, []want{notSup("spec.persistentVolumeClaimRetentionPolicy.whenScaled")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validStatefulSet()
			tc.mutate(s)
			expectErrs(t, ValidateCreate(s), tc.want...)
		})
	}
	updates := []struct {
		name   string
		mutate func(s *appsv1.StatefulSet)
		want   []want
	}{
		{"replicas template strategy may change", func(s *appsv1.StatefulSet) {
			s.Spec.Replicas = ptr[int32](5)
			s.Spec.Template.Spec.Containers[0].Image = "db:2"
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr[int32](2)
			s.Spec.MinReadySeconds = 5
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
		}, nil},
		{"serviceName may not change", func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "db2" }, []want{forbidden("spec")}},
		{"claim templates may not change", func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Name = "other" }, []want{forbidden("spec")}},
	}
	for _, tc := range updates {
		t.Run("update "+tc.name, func(t *testing.T) {
			old, s := validStatefulSet(), validStatefulSet()
			stored(&old.ObjectMeta)
			stored(&s.ObjectMeta)
			tc.mutate(s)
			expectErrs(t, ValidateUpdate(s, old), tc.want...)
		})
	}
}

func TestDaemonSet(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: meta("agent"), Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: validTemplate(webLabels),
		UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{
			MaxUnavailable: ptr(intstr.FromInt32(1)), MaxSurge: ptr(intstr.FromInt32(0))}},
		RevisionHistoryLimit: ptr[int32](10),
	}}
	cases := []struct {
		name   string
		mutate func(d *appsv1.DaemonSet)
		want   []want
	}{
		{"valid", func(d *appsv1.DaemonSet) {}, nil},
		{"empty selector", func(d *appsv1.DaemonSet) { d.Spec.Selector = &metav1.LabelSelector{} }, []want{invalid("spec.selector")}},
		{"strategy enum", func(d *appsv1.DaemonSet) { d.Spec.UpdateStrategy.Type = "Rolling" }, []want{notSup("spec.updateStrategy.type")}},
		{"both zero", func(d *appsv1.DaemonSet) {
			d.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr(intstr.FromInt32(0))
		}, []want{invalid("spec.updateStrategy.rollingUpdate.maxUnavailable")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := ds.DeepCopy()
			tc.mutate(d)
			expectErrs(t, ValidateCreate(d), tc.want...)
		})
	}
}

func TestControllerRevisionAndScale(t *testing.T) {
	cr := &appsv1.ControllerRevision{ObjectMeta: meta("web-1"), Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{}`)}}
	t.Run("revision valid", func(t *testing.T) { expectErrs(t, ValidateCreate(cr)) })
	t.Run("revision data required and revision non-negative", func(t *testing.T) {
		bad := cr.DeepCopy()
		bad.Data = runtime.RawExtension{}
		bad.Revision = -1
		expectErrs(t, ValidateCreate(bad), required("data"), invalid("revision"))
	})
	t.Run("revision data immutable", func(t *testing.T) {
		old, n := cr.DeepCopy(), cr.DeepCopy()
		stored(&old.ObjectMeta)
		stored(&n.ObjectMeta)
		n.Data = runtime.RawExtension{Raw: []byte(`{"a":1}`)}
		n.Revision = 2
		expectErrs(t, ValidateUpdate(n, old), invalid("data"))
	})
	t.Run("scale replicas", func(t *testing.T) {
		s := &autoscalingv1.Scale{ObjectMeta: meta("web"), Spec: autoscalingv1.ScaleSpec{Replicas: -2}}
		expectErrs(t, ValidateUpdate(s, s.DeepCopy()), invalid("spec.replicas"))
	})
}
