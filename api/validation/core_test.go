package validation

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/api/events"
)

func validPVCSpec() corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("1Gi")}},
		VolumeMode:  ptr(corev1.PersistentVolumeFilesystem),
	}
}

func TestConfigMap(t *testing.T) {
	cases := []struct {
		name string
		cm   *corev1.ConfigMap
		want []want
	}{
		{"valid", &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"app.conf": "x", "KEY_1": "y"}}, nil},
		{"bad key", &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"a/b": "x"}}, []want{invalid("data[a/b]")}},
		{"key in data and binaryData", &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"k": "x"}, BinaryData: map[string][]byte{"k": {1}}}, []want{invalid("binaryData[k]")}},
		{"too large", &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"k": strings.Repeat("x", 1<<20)}}, []want{tooLong("data")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { expectErrs(t, ValidateCreate(tc.cm), tc.want...) })
	}
	t.Run("immutable forbids data changes", func(t *testing.T) {
		old := &corev1.ConfigMap{ObjectMeta: meta("c"), Immutable: ptr(true), Data: map[string]string{"k": "1"}}
		stored(&old.ObjectMeta)
		cm := old.DeepCopy()
		cm.Data["k"] = "2"
		cm.Immutable = ptr(false)
		expectErrs(t, ValidateUpdate(cm, old), forbidden("data"), forbidden("immutable"))
	})
}

func TestSecret(t *testing.T) {
	cases := []struct {
		name string
		s    *corev1.Secret
		want []want
	}{
		{"opaque", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("x")}}, nil},
		{"tls needs both keys", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("x")}}, []want{required("data[tls.key]")}},
		{"dockerconfigjson must parse", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("{")}}, []want{invalid("data[.dockerconfigjson]")}},
		{"dockerconfigjson required", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeDockerConfigJson}, []want{required("data[.dockerconfigjson]")}},
		{"token needs service account", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeServiceAccountToken}, []want{required("metadata.annotations[kubernetes.io/service-account.name]")}},
		{"bad key", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"..": nil}}, []want{invalid("data[..]")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { expectErrs(t, ValidateCreate(tc.s), tc.want...) })
	}
	t.Run("type immutable", func(t *testing.T) {
		old := &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque}
		stored(&old.ObjectMeta)
		s := old.DeepCopy()
		s.Type = "example.com/custom"
		expectErrs(t, ValidateUpdate(s, old), invalid("type"))
	})
	t.Run("immutable secret data", func(t *testing.T) {
		old := &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque, Immutable: ptr(true), Data: map[string][]byte{"k": []byte("1")}}
		stored(&old.ObjectMeta)
		s := old.DeepCopy()
		s.Data["k"] = []byte("2")
		expectErrs(t, ValidateUpdate(s, old), forbidden("data"))
	})
}

func TestNamespace(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: clusterMeta("team-a"), Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	t.Run("valid", func(t *testing.T) { expectErrs(t, ValidateCreate(ns)) })
	t.Run("name is a dns label", func(t *testing.T) {
		bad := ns.DeepCopy()
		bad.Name = "team.a"
		expectErrs(t, ValidateCreate(bad), invalid("metadata.name"))
	})
	t.Run("finalizer names", func(t *testing.T) {
		bad := ns.DeepCopy()
		bad.Spec.Finalizers = []corev1.FinalizerName{"custom"}
		expectErrs(t, ValidateCreate(bad), invalid("spec.finalizers[0]"))
	})
	t.Run("phase follows deletion", func(t *testing.T) {
		old := ns.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Status.Phase = corev1.NamespaceTerminating
		expectErrs(t, ValidateStatusUpdate(n, old), invalid("status.Phase"))
	})
}

func TestNode(t *testing.T) {
	node := &corev1.Node{ObjectMeta: clusterMeta("node-1"), Spec: corev1.NodeSpec{PodCIDRs: []string{"10.244.1.0/24", "fd00:1::/64"}}}
	cases := []struct {
		name   string
		mutate func(n *corev1.Node)
		want   []want
	}{
		{"valid", func(n *corev1.Node) {}, nil},
		{"bad cidr", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/33"} }, []want{invalid("spec.podCIDRs[0]")}},
		{"two of one family", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "10.244.2.0/24"} }, []want{invalid("spec.podCIDRs")}},
		{"taints", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{
				{Key: "k", Effect: corev1.TaintEffectNoSchedule},
				{Key: "k", Effect: corev1.TaintEffectNoSchedule},
				{Key: "bad key", Effect: "Sometimes"},
			}
		}, []want{dup("spec.taints[1]"), invalid("spec.taints[2].key"), notSup("spec.taints[2].effect")}},
		{"negative capacity", func(n *corev1.Node) { n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: q("-1")} }, []want{invalid("status.capacity[cpu]")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := node.DeepCopy()
			tc.mutate(n)
			expectErrs(t, ValidateCreate(n), tc.want...)
		})
	}
	t.Run("podCIDRs immutable once set", func(t *testing.T) {
		old := node.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Spec.PodCIDRs = []string{"10.244.9.0/24"}
		expectErrs(t, ValidateUpdate(n, old), forbidden("spec.podCIDRs"))
	})
	t.Run("podCIDRs may be assigned", func(t *testing.T) {
		old := node.DeepCopy()
		old.Spec.PodCIDRs = nil
		stored(&old.ObjectMeta)
		expectErrs(t, ValidateUpdate(node.DeepCopy(), old), invalid("metadata.resourceVersion"))
	})
}

func TestEvents(t *testing.T) {
	legacy := func() *events.Event {
		return &events.Event{ObjectMeta: meta("web.1"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, Reason: "Started", Type: corev1.EventTypeNormal}
	}
	cases := []struct {
		name   string
		mutate func(e *events.Event)
		want   []want
	}{
		{"legacy valid", func(e *events.Event) {}, nil},
		{"legacy lenient on reason", func(e *events.Event) { e.Reason = "" }, nil},
		{"legacy cluster object into default", func(e *events.Event) { e.InvolvedObject.Namespace = "" }, nil},
		{"involved namespace mismatch", func(e *events.Event) { e.InvolvedObject.Namespace = "other" }, []want{invalid("involvedObject.namespace")}},
		{"new-style needs reporting fields", func(e *events.Event) { e.EventTime = metav1.NewMicroTime(time.Now()) }, []want{
			required("reportingComponent"), required("reportingInstance"), required("action")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := legacy()
			tc.mutate(e)
			expectErrs(t, ValidateCreate(e), tc.want...)
		})
	}
	t.Run("strict events.k8s.io", func(t *testing.T) {
		e := legacy()
		e.Count = 3
		errs := ValidateEvent(e, nil, true)
		expectErrs(t, errs, required("eventTime"), invalid("count"))
	})
	t.Run("strict update keeps reason", func(t *testing.T) {
		old := legacy()
		old.EventTime = metav1.NewMicroTime(time.Now())
		old.ReportingController, old.ReportingInstance, old.Action = "example.com/ctl", "ctl-1", "Start"
		old.InvolvedObject.Namespace = "default"
		stored(&old.ObjectMeta)
		e := old.DeepCopyObject().(*events.Event)
		e.Reason = "Changed"
		expectErrs(t, ValidateEvent(e, old, true), invalid("reason"))
	})
}

func TestPersistentVolumeClaim(t *testing.T) {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: meta("data"), Spec: validPVCSpec()}
	cases := []struct {
		name   string
		mutate func(c *corev1.PersistentVolumeClaim)
		want   []want
	}{
		{"valid", func(c *corev1.PersistentVolumeClaim) {}, nil},
		{"access modes required", func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = nil }, []want{required("spec.accessModes")}},
		{"access mode enum", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteAll"}
		}, []want{notSup("spec.accessModes")}},
		{"storage request required", func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }, []want{required("spec.resources[storage]")}},
		{"storage request positive", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = q("0")
		}, []want{invalid("spec.resources[storage]")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pvc.DeepCopy()
			tc.mutate(c)
			expectErrs(t, ValidateCreate(c), tc.want...)
		})
	}
	updates := []struct {
		name   string
		mutate func(c, old *corev1.PersistentVolumeClaim)
		want   []want
	}{
		{"bind sets volumeName", func(c, old *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv-1" }, nil},
		{"bound claim grows", func(c, old *corev1.PersistentVolumeClaim) {
			old.Status.Phase, c.Status.Phase = corev1.ClaimBound, corev1.ClaimBound
			old.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q("1Gi")}
			c.Spec.Resources.Requests[corev1.ResourceStorage] = q("2Gi")
		}, nil},
		{"shrink below capacity", func(c, old *corev1.PersistentVolumeClaim) {
			old.Status.Phase, c.Status.Phase = corev1.ClaimBound, corev1.ClaimBound
			old.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q("1Gi")}
			c.Spec.Resources.Requests[corev1.ResourceStorage] = q("512Mi")
		}, []want{forbidden("spec.resources.requests.storage")}},
		{"access modes immutable", func(c, old *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, []want{forbidden("spec")}},
	}
	for _, tc := range updates {
		t.Run("update "+tc.name, func(t *testing.T) {
			old := pvc.DeepCopy()
			stored(&old.ObjectMeta)
			c := old.DeepCopy()
			tc.mutate(c, old)
			expectErrs(t, ValidateUpdate(c, old), tc.want...)
		})
	}
}

func TestPersistentVolume(t *testing.T) {
	pv := &corev1.PersistentVolume{ObjectMeta: clusterMeta("pv-1"), Spec: corev1.PersistentVolumeSpec{
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: q("10Gi")},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/pv-1"}},
		VolumeMode:                    ptr(corev1.PersistentVolumeFilesystem),
	}}
	cases := []struct {
		name   string
		mutate func(v *corev1.PersistentVolume)
		want   []want
	}{
		{"valid", func(v *corev1.PersistentVolume) {}, nil},
		{"capacity required", func(v *corev1.PersistentVolume) { v.Spec.Capacity = nil }, []want{required("spec.capacity")}},
		{"source required", func(v *corev1.PersistentVolume) { v.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{} }, []want{required("spec")}},
		{"local needs node affinity", func(v *corev1.PersistentVolume) {
			v.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}}
		}, []want{required("spec.nodeAffinity")}},
		{"reclaim policy enum", func(v *corev1.PersistentVolume) { v.Spec.PersistentVolumeReclaimPolicy = "Keep" }, []want{notSup("spec.persistentVolumeReclaimPolicy")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := pv.DeepCopy()
			tc.mutate(v)
			expectErrs(t, ValidateCreate(v), tc.want...)
		})
	}
	t.Run("source immutable", func(t *testing.T) {
		old := pv.DeepCopy()
		stored(&old.ObjectMeta)
		v := old.DeepCopy()
		v.Spec.HostPath.Path = "/srv/other"
		expectErrs(t, ValidateUpdate(v, old), forbidden("spec.persistentvolumesource"))
	})
}

func TestEndpoints(t *testing.T) {
	ep := &corev1.Endpoints{ObjectMeta: meta("web"), Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}},
		Ports:     []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}},
	}}}
	t.Run("valid", func(t *testing.T) { expectErrs(t, ValidateCreate(ep)) })
	t.Run("bad addresses and ports", func(t *testing.T) {
		bad := ep.DeepCopy()
		bad.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "nope"}, {IP: "127.0.0.1"}}
		bad.Subsets[0].Ports = append(bad.Subsets[0].Ports, corev1.EndpointPort{Port: 0, Protocol: corev1.ProtocolTCP})
		bad.Subsets = append(bad.Subsets, corev1.EndpointSubset{})
		expectErrs(t, ValidateCreate(bad),
			invalid("subsets[0].addresses[0].ip"), invalid("subsets[0].addresses[1].ip"),
			required("subsets[0].ports[0].name"), required("subsets[0].ports[1].name"), invalid("subsets[0].ports[1].port"),
			required("subsets[1]"))
	})
}

func TestQuotaAndLimits(t *testing.T) {
	rq := &corev1.ResourceQuota{ObjectMeta: meta("q"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourcePods: q("10"), corev1.ResourceRequestsCPU: q("4"), "count/deployments.apps": q("5")}}}
	t.Run("quota valid", func(t *testing.T) { expectErrs(t, ValidateCreate(rq)) })
	t.Run("quota bad values", func(t *testing.T) {
		bad := rq.DeepCopy()
		bad.Spec.Hard = corev1.ResourceList{corev1.ResourcePods: q("1.5"), "widgets": q("1"), corev1.ResourceMemory: q("-1")}
		bad.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating}
		expectErrs(t, ValidateCreate(bad), invalid("spec.hard[pods]"), invalid("spec.hard[widgets]"), invalid("spec.hard[memory]"), invalid("spec.scopes"))
	})
	lr := &corev1.LimitRange{ObjectMeta: meta("l"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Min: corev1.ResourceList{corev1.ResourceCPU: q("100m")}, Max: corev1.ResourceList{corev1.ResourceCPU: q("2")},
		Default: corev1.ResourceList{corev1.ResourceCPU: q("500m")}, DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("200m")},
	}}}}
	t.Run("limitrange valid", func(t *testing.T) { expectErrs(t, ValidateCreate(lr)) })
	t.Run("limitrange order", func(t *testing.T) {
		bad := lr.DeepCopy()
		bad.Spec.Limits[0].Min[corev1.ResourceCPU] = q("3")
		bad.Spec.Limits = append(bad.Spec.Limits, corev1.LimitRangeItem{Type: corev1.LimitTypePod, Default: corev1.ResourceList{corev1.ResourceCPU: q("1")}})
		expectErrs(t, ValidateCreate(bad), invalid("spec.limits[0].min[cpu]"), invalid("spec.limits[0].defaultRequest[cpu]"),
			invalid("spec.limits[0].default[cpu]"), forbidden("spec.limits[1].default"))
	})
}

func TestServiceAccount(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: meta("builder"), ImagePullSecrets: []corev1.LocalObjectReference{{}}}
	expectErrs(t, ValidateCreate(sa), required("imagePullSecrets[0].name"))
}
