package validation

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestPodDisruptionBudget(t *testing.T) {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: meta("web"), Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr(intstr.FromString("50%")), Selector: &metav1.LabelSelector{MatchLabels: webLabels}}}
	expectErrs(t, ValidateCreate(pdb))
	bad := pdb.DeepCopy()
	bad.Spec.MaxUnavailable = ptr(intstr.FromInt32(-1))
	expectErrs(t, ValidateCreate(bad), invalid("spec"), invalid("spec.maxUnavailable"))
	bad = pdb.DeepCopy()
	bad.Spec.MinAvailable = ptr(intstr.FromString("120%"))
	expectErrs(t, ValidateCreate(bad), invalid("spec.minAvailable"))
}

func TestPriorityClass(t *testing.T) {
	cases := []struct {
		name string
		pc   *schedulingv1.PriorityClass
		want []want
	}{
		{"user class", &schedulingv1.PriorityClass{ObjectMeta: clusterMeta("high"), Value: 1000}, nil},
		{"user value too high", &schedulingv1.PriorityClass{ObjectMeta: clusterMeta("high"), Value: 2000000000}, []want{forbidden("value")}},
		{"built-in system class", &schedulingv1.PriorityClass{ObjectMeta: clusterMeta("system-node-critical"), Value: 2000001000}, nil},
		{"reserved prefix", &schedulingv1.PriorityClass{ObjectMeta: clusterMeta("system-mine"), Value: 10}, []want{forbidden("metadata.name")}},
		{"system class wrong value", &schedulingv1.PriorityClass{ObjectMeta: clusterMeta("system-cluster-critical"), Value: 10}, []want{forbidden("metadata.name")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { expectErrs(t, ValidateCreate(tc.pc), tc.want...) })
	}
	t.Run("value immutable", func(t *testing.T) {
		old := &schedulingv1.PriorityClass{ObjectMeta: clusterMeta("high"), Value: 1000}
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Value = 2000
		expectErrs(t, ValidateUpdate(n, old), forbidden("value"))
	})
}

func TestHorizontalPodAutoscaler(t *testing.T) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("web"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MinReplicas:    ptr[int32](1), MaxReplicas: 10,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr[int32](80)}}}},
	}}
	cases := []struct {
		name   string
		mutate func(h *autoscalingv2.HorizontalPodAutoscaler)
		want   []want
	}{
		{"valid", func(h *autoscalingv2.HorizontalPodAutoscaler) {}, nil},
		{"target ref required", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{}
		}, []want{required("spec.scaleTargetRef.kind"), required("spec.scaleTargetRef.name")}},
		{"min above max", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr[int32](20) }, []want{invalid("spec.maxReplicas")}},
		{"max at least one", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas, h.Spec.MinReplicas = 0, nil }, []want{invalid("spec.maxReplicas")}},
		{"metric source must match type", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Type = autoscalingv2.PodsMetricSourceType
		}, []want{required("spec.metrics[0].pods"), forbidden("spec.metrics[0].resource")}},
		{"utilization positive", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr[int32](0)
		}, []want{invalid("spec.metrics[0].resource.target.averageUtilization")}},
		{"behavior policies", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
				StabilizationWindowSeconds: ptr[int32](4000),
				Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 0, PeriodSeconds: 60}},
			}}
		}, []want{invalid("spec.behavior.scaleUp.stabilizationWindowSeconds"), invalid("spec.behavior.scaleUp.policies[0].value")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := hpa.DeepCopy()
			tc.mutate(h)
			expectErrs(t, ValidateCreate(h), tc.want...)
		})
	}
}

func TestLeaseAndRuntimeClass(t *testing.T) {
	l := &coordinationv1.Lease{ObjectMeta: meta("leader"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](15)}}
	expectErrs(t, ValidateCreate(l))
	bad := l.DeepCopy()
	bad.Spec.LeaseDurationSeconds = ptr[int32](0)
	bad.Spec.LeaseTransitions = ptr[int32](-1)
	bad.Spec.PreferredHolder = ptr("b")
	expectErrs(t, ValidateCreate(bad), invalid("spec.leaseDurationSeconds"), invalid("spec.leaseTransitions"), forbidden("spec.preferredHolder"))

	rc := &nodev1.RuntimeClass{ObjectMeta: clusterMeta("gvisor"), Handler: "runsc"}
	expectErrs(t, ValidateCreate(rc))
	badRC := rc.DeepCopy()
	badRC.Handler = "run.sc"
	expectErrs(t, ValidateCreate(badRC), invalid("handler"))
	old := rc.DeepCopy()
	stored(&old.ObjectMeta)
	changed := old.DeepCopy()
	changed.Handler = "kata"
	expectErrs(t, ValidateUpdate(changed, old), invalid("handler"))
}

func TestStorageKinds(t *testing.T) {
	sc := &storagev1.StorageClass{ObjectMeta: clusterMeta("standard"), Provisioner: "rancher.io/local-path",
		ReclaimPolicy: ptr(corev1.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr(storagev1.VolumeBindingWaitForFirstConsumer),
		Parameters: map[string]string{"type": "ssd"}}
	t.Run("storageclass valid", func(t *testing.T) { expectErrs(t, ValidateCreate(sc)) })
	t.Run("storageclass required fields", func(t *testing.T) {
		bad := sc.DeepCopy()
		bad.Provisioner = ""
		bad.ReclaimPolicy = ptr(corev1.PersistentVolumeReclaimRecycle)
		expectErrs(t, ValidateCreate(bad), required("provisioner"), notSup("reclaimPolicy"))
	})
	t.Run("storageclass immutable parameters", func(t *testing.T) {
		old := sc.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Parameters = map[string]string{"type": "hdd"}
		n.ReclaimPolicy = ptr(corev1.PersistentVolumeReclaimRetain)
		expectErrs(t, ValidateUpdate(n, old), forbidden("parameters"), forbidden("reclaimPolicy"))
	})
	drv := &storagev1.CSIDriver{ObjectMeta: clusterMeta("csi.example.com"), Spec: storagev1.CSIDriverSpec{
		AttachRequired: ptr(true), PodInfoOnMount: ptr(false), StorageCapacity: ptr(false), RequiresRepublish: ptr(false),
		FSGroupPolicy: ptr(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy), VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}}}
	t.Run("csidriver valid", func(t *testing.T) { expectErrs(t, ValidateCreate(drv)) })
	t.Run("csidriver attachRequired immutable", func(t *testing.T) {
		old := drv.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Spec.AttachRequired = ptr(false)
		expectErrs(t, ValidateUpdate(n, old), invalid("spec.attachRequired"))
	})
	node := &storagev1.CSINode{ObjectMeta: clusterMeta("node-1"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: "csi.example.com", NodeID: "n1", TopologyKeys: []string{"topology.kubernetes.io/zone"}}}}}
	t.Run("csinode valid", func(t *testing.T) { expectErrs(t, ValidateCreate(node)) })
	t.Run("csinode duplicates", func(t *testing.T) {
		bad := node.DeepCopy()
		bad.Spec.Drivers = append(bad.Spec.Drivers, storagev1.CSINodeDriver{Name: "csi.example.com"})
		expectErrs(t, ValidateCreate(bad), dup("spec.drivers[1].name"), required("spec.drivers[1].nodeID"))
	})
	va := &storagev1.VolumeAttachment{ObjectMeta: clusterMeta("va-1"), Spec: storagev1.VolumeAttachmentSpec{
		Attacher: "csi.example.com", NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv-1")}}}
	t.Run("volumeattachment valid", func(t *testing.T) { expectErrs(t, ValidateCreate(va)) })
	t.Run("volumeattachment source", func(t *testing.T) {
		bad := va.DeepCopy()
		bad.Spec.Source = storagev1.VolumeAttachmentSource{}
		expectErrs(t, ValidateCreate(bad), required("spec.source"))
	})
	t.Run("volumeattachment spec immutable", func(t *testing.T) {
		old := va.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Spec.NodeName = "node-2"
		expectErrs(t, ValidateUpdate(n, old), invalid("spec"))
	})
}

func TestFlowControl(t *testing.T) {
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: clusterMeta("workload"), Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
		MatchingPrecedence:         9000,
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "system:serviceaccounts"}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}},
		}},
	}}
	t.Run("flowschema valid", func(t *testing.T) { expectErrs(t, ValidateCreate(fs)) })
	t.Run("flowschema errors", func(t *testing.T) {
		bad := fs.DeepCopy()
		bad.Spec.MatchingPrecedence = 0
		bad.Spec.Rules[0].Subjects = nil
		bad.Spec.Rules[0].ResourceRules[0].Verbs = []string{"get", "*"}
		expectErrs(t, ValidateCreate(bad), invalid("spec.matchingPrecedence"), required("spec.rules[0].subjects"), invalid("spec.rules[0].resourceRules[0].verbs"))
	})
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: clusterMeta("workload-low"), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr[int32](100), LendablePercent: ptr[int32](90),
			LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50}}}}}
	t.Run("priority level valid", func(t *testing.T) { expectErrs(t, ValidateCreate(pl)) })
	t.Run("priority level errors", func(t *testing.T) {
		bad := pl.DeepCopy()
		bad.Spec.Limited.LendablePercent = ptr[int32](150)
		bad.Spec.Limited.LimitResponse.Queuing.HandSize = 200
		expectErrs(t, ValidateCreate(bad), invalid("spec.limited.lendablePercent"), invalid("spec.limited.limitResponse.queuing.handSize"))
	})
}

func TestResourceKinds(t *testing.T) {
	dc := &resourcev1.DeviceClass{ObjectMeta: clusterMeta("gpu.example.com"), Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}}
	t.Run("deviceclass valid", func(t *testing.T) { expectErrs(t, ValidateCreate(dc)) })
	t.Run("deviceclass empty selector", func(t *testing.T) {
		bad := dc.DeepCopy()
		bad.Spec.Selectors = []resourcev1.DeviceSelector{{}}
		expectErrs(t, ValidateCreate(bad), required("spec.selectors[0].cel"))
	})
	claim := &resourcev1.ResourceClaim{ObjectMeta: meta("gpu"), Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}}}}}
	t.Run("claim valid", func(t *testing.T) { expectErrs(t, ValidateCreate(claim)) })
	t.Run("claim request fields", func(t *testing.T) {
		bad := claim.DeepCopy()
		bad.Spec.Devices.Requests = append(bad.Spec.Devices.Requests,
			resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{AllocationMode: resourcev1.DeviceAllocationModeExactCount}},
			resourcev1.DeviceRequest{Name: "none"})
		expectErrs(t, ValidateCreate(bad), dup("spec.devices.requests[1]"), required("spec.devices.requests[1].exactly.deviceClassName"),
			invalid("spec.devices.requests[1].exactly.count"), required("spec.devices.requests[2]"))
	})
	t.Run("claim spec immutable", func(t *testing.T) {
		old := claim.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Spec.Devices.Requests[0].Exactly.Count = 2
		expectErrs(t, ValidateUpdate(n, old), invalid("spec"))
	})
	slice := &resourcev1.ResourceSlice{ObjectMeta: clusterMeta("node-1-gpu"), Spec: resourcev1.ResourceSliceSpec{
		Driver: "gpu.example.com", NodeName: ptr("node-1"), Pool: resourcev1.ResourcePool{Name: "node-1", ResourceSliceCount: 1},
		Devices: []resourcev1.Device{{Name: "gpu-0"}}}}
	t.Run("slice valid", func(t *testing.T) { expectErrs(t, ValidateCreate(slice)) })
	t.Run("slice node selection", func(t *testing.T) {
		bad := slice.DeepCopy()
		bad.Spec.AllNodes = ptr(true)
		bad.Spec.Pool.ResourceSliceCount = 0
		expectErrs(t, ValidateCreate(bad), invalid("spec"), invalid("spec.pool.resourceSliceCount"))
	})
	rule := &resourcev1.DeviceTaintRule{ObjectMeta: clusterMeta("gpu-0-broken"), Spec: resourcev1.DeviceTaintRuleSpec{
		DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr("gpu.example.com"), Pool: ptr("node-1/rack-2"), Device: ptr("gpu-0")},
		Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Value: "fan", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}
	t.Run("taint rule valid", func(t *testing.T) { expectErrs(t, ValidateCreate(rule)) })
	t.Run("taint rule errors", func(t *testing.T) {
		bad := rule.DeepCopy()
		bad.Spec.DeviceSelector = &resourcev1.DeviceTaintSelector{Driver: ptr("GPU!"), Pool: ptr("node-1//x"), Device: ptr("gpu.0")}
		bad.Spec.Taint = resourcev1.DeviceTaint{Key: "bad key", Value: "not a value", Effect: "Explode"}
		expectErrs(t, ValidateCreate(bad), invalid("spec.deviceSelector.driver"),
			invalid("spec.deviceSelector.pool"), invalid("spec.deviceSelector.device"), invalid("spec.taint.key"),
			invalid("spec.taint.value"), notSup("spec.taint.effect"))
	})
	t.Run("taint rule without key or effect", func(t *testing.T) {
		bad := rule.DeepCopy()
		bad.Spec.Taint = resourcev1.DeviceTaint{}
		expectErrs(t, ValidateCreate(bad), required("spec.taint.key"), required("spec.taint.effect"))
	})
}

func TestResourceSliceUpdateKeepsAlphaField(t *testing.T) {
	old := &resourcev1.ResourceSlice{ObjectMeta: clusterMeta("s"), Spec: resourcev1.ResourceSliceSpec{
		Driver: "gpu.example.com", AllNodes: ptr(true), Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}}}
	t.Run("new use of alpha field forbidden", func(t *testing.T) {
		s := old.DeepCopy()
		s.Spec.PartitionTypeAttribute = ptr(resourcev1.FullyQualifiedName("gpu.example.com/type"))
		if errs := ValidateCreate(s); len(errs) == 0 {
			t.Fatal("alpha field accepted on create")
		}
	})
	t.Run("existing use kept on update", func(t *testing.T) {
		o := old.DeepCopy()
		o.Spec.PartitionTypeAttribute = ptr(resourcev1.FullyQualifiedName("gpu.example.com/type"))
		stored(&o.ObjectMeta)
		s := o.DeepCopy()
		s.Spec.Pool.Generation = 2
		expectErrs(t, ValidateUpdate(s, o))
	})
}

func TestStorageVersionMigration(t *testing.T) {
	svm := func(group, resource string) *storagemigrationv1.StorageVersionMigration {
		m := &storagemigrationv1.StorageVersionMigration{ObjectMeta: clusterMeta("migrate"),
			Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
		return m
	}
	expectErrs(t, ValidateCreate(svm("apps", "deployments")))
	expectErrs(t, ValidateCreate(svm("", "")), required("spec.resource.resource"))
	expectErrs(t, ValidateCreate(svm("Apps!", "Deployments")), invalid("spec.resource.group"), invalid("spec.resource.resource"))

	old := svm("apps", "deployments")
	stored(&old.ObjectMeta)
	changed := old.DeepCopy()
	changed.Spec.Resource.Resource = "replicasets"
	expectErrs(t, ValidateUpdate(changed, old), invalid("spec"))

	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "Test", LastTransitionTime: metav1.Unix(1700000000, 0)}
	}
	done := old.DeepCopy()
	done.Status = storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "42", Conditions: []metav1.Condition{cond("Succeeded", metav1.ConditionTrue)}}
	expectErrs(t, ValidateStatusUpdate(done, old))
	cases := []struct {
		name   string
		status storagemigrationv1.StorageVersionMigrationStatus
		want   []want
	}{
		{"resource version not a number", storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "x42",
			Conditions: []metav1.Condition{cond("Succeeded", metav1.ConditionTrue)}}, []want{invalid("status.resourceVersion"), invalid("status.resourceVersion")}},
		{"success undone", storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "42",
			Conditions: []metav1.Condition{cond("Succeeded", metav1.ConditionFalse)}}, []want{invalid("status.conditions")}},
		{"success and failure", storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "42",
			Conditions: []metav1.Condition{cond("Succeeded", metav1.ConditionTrue), cond("Failed", metav1.ConditionTrue)}}, []want{invalid("status.conditions")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := done.DeepCopy()
			next.Status = tc.status
			expectErrs(t, ValidateStatusUpdate(next, done), tc.want...)
		})
	}
}
