package resourcequota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func list(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func pod(name string, requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
		}}},
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   corev1.ResourceName
		family family
		gr     schema.GroupResource
	}{
		{"pods", familyPods, schema.GroupResource{}},
		{"count/pods", familyPods, schema.GroupResource{}},
		{"requests.cpu", familyPods, schema.GroupResource{}},
		{"cpu", familyPods, schema.GroupResource{}},
		{"limits.memory", familyPods, schema.GroupResource{}},
		{"requests.ephemeral-storage", familyPods, schema.GroupResource{}},
		{"hugepages-2Mi", familyPods, schema.GroupResource{}},
		{"requests.hugepages-2Mi", familyPods, schema.GroupResource{}},
		{"requests.example.com/gpu", familyPods, schema.GroupResource{}},
		{"limits.example.com/gpu", familyNone, schema.GroupResource{}},
		{"services", familyServices, schema.GroupResource{}},
		{"services.nodeports", familyServices, schema.GroupResource{}},
		{"services.loadbalancers", familyServices, schema.GroupResource{}},
		{"count/services", familyServices, schema.GroupResource{}},
		{"persistentvolumeclaims", familyClaims, schema.GroupResource{}},
		{"requests.storage", familyClaims, schema.GroupResource{}},
		{"gold.storageclass.storage.k8s.io/requests.storage", familyClaims, schema.GroupResource{}},
		{"configmaps", familyCount, schema.GroupResource{Resource: "configmaps"}},
		{"secrets", familyCount, schema.GroupResource{Resource: "secrets"}},
		{"resourcequotas", familyCount, schema.GroupResource{Resource: "resourcequotas"}},
		{"count/configmaps", familyCount, schema.GroupResource{Resource: "configmaps"}},
		{"count/deployments.apps", familyCount, schema.GroupResource{Group: "apps", Resource: "deployments"}},
		{"count/widgets.example.com", familyCount, schema.GroupResource{Group: "example.com", Resource: "widgets"}},
		{"count/", familyNone, schema.GroupResource{}},
		{"bogus", familyNone, schema.GroupResource{}},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			f, gr := classify(tt.name)
			if f != tt.family || gr != tt.gr {
				t.Errorf("classify(%s) = %v %v, want %v %v", tt.name, f, gr, tt.family, tt.gr)
			}
		})
	}
}

func TestPodUsage(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want corev1.ResourceList
	}{
		{
			name: "best effort pod counts one pod",
			pod:  pod("a", nil, nil),
			want: list("pods", "1", "count/pods", "1"),
		},
		{
			name: "requests and limits",
			pod:  pod("a", list("cpu", "250m", "memory", "64Mi"), list("cpu", "1", "memory", "128Mi")),
			want: list("pods", "1", "count/pods", "1",
				"cpu", "250m", "requests.cpu", "250m", "memory", "64Mi", "requests.memory", "64Mi",
				"limits.cpu", "1", "limits.memory", "128Mi"),
		},
		{
			name: "extended resources count as requests",
			pod:  pod("a", list("example.com/gpu", "2"), list("example.com/gpu", "2")),
			want: list("pods", "1", "count/pods", "1", "requests.example.com/gpu", "2"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podUsage(tt.pod); !equalLists(got, tt.want) {
				t.Errorf("podUsage = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPodCharged(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	deleting := func(at time.Time, grace int64) *corev1.Pod {
		p := pod("a", nil, nil)
		p.DeletionTimestamp = &metav1.Time{Time: at}
		p.DeletionGracePeriodSeconds = &grace
		return p
	}
	phase := func(ph corev1.PodPhase) *corev1.Pod {
		p := pod("a", nil, nil)
		p.Status.Phase = ph
		return p
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"running pod", phase(corev1.PodRunning), true},
		{"pending pod", phase(corev1.PodPending), true},
		{"succeeded pod", phase(corev1.PodSucceeded), false},
		{"failed pod", phase(corev1.PodFailed), false},
		{"deleting within grace", deleting(now.Add(10*time.Second), 30), true},
		{"deleting past grace", deleting(now.Add(-time.Minute), 30), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podCharged(tt.pod, now); got != tt.want {
				t.Errorf("podCharged = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestServiceUsage(t *testing.T) {
	ports := func(n int, nodePort int32) []corev1.ServicePort {
		var ps []corev1.ServicePort
		for i := range n {
			ps = append(ps, corev1.ServicePort{Port: int32(80 + i), NodePort: nodePort})
		}
		return ps
	}
	tests := []struct {
		name string
		spec corev1.ServiceSpec
		want corev1.ResourceList
	}{
		{"cluster ip", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports(2, 0)},
			list("services", "1", "count/services", "1")},
		{"node port counts each port", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports(2, 0)},
			list("services", "1", "count/services", "1", "services.nodeports", "2")},
		{"load balancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports(3, 0)},
			list("services", "1", "count/services", "1", "services.nodeports", "3", "services.loadbalancers", "1")},
		{"load balancer without node ports counts explicit ones", corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: ptr.To(false),
			Ports: append(ports(1, 30001), ports(2, 0)...)},
			list("services", "1", "count/services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serviceUsage(&corev1.Service{Spec: tt.spec}); !equalLists(got, tt.want) {
				t.Errorf("serviceUsage = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClaimUsage(t *testing.T) {
	claim := func(class *string, annotation string, request, allocated string) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: list("storage", request)},
		}}
		if annotation != "" {
			c.Annotations = map[string]string{betaStorageClassAnnot: annotation}
		}
		if allocated != "" {
			c.Status.AllocatedResources = list("storage", allocated)
		}
		return c
	}
	tests := []struct {
		name string
		pvc  *corev1.PersistentVolumeClaim
		want corev1.ResourceList
	}{
		{"no class", claim(nil, "", "1Gi", ""),
			list("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "1Gi")},
		{"class adds per-class usage", claim(ptr.To("gold"), "", "1Gi", ""),
			list("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "1Gi",
				"gold.storageclass.storage.k8s.io/requests.storage", "1Gi", "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1")},
		{"beta annotation wins", claim(ptr.To("gold"), "silver", "1Gi", ""),
			list("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "1Gi",
				"silver.storageclass.storage.k8s.io/requests.storage", "1Gi", "silver.storageclass.storage.k8s.io/persistentvolumeclaims", "1")},
		{"larger allocation counts", claim(nil, "", "1Gi", "2Gi"),
			list("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "2Gi")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claimUsage(tt.pvc); !equalLists(got, tt.want) {
				t.Errorf("claimUsage = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPodScopes(t *testing.T) {
	burstable := pod("b", list("cpu", "1"), nil)
	besteffort := pod("e", nil, nil)
	deadline := pod("d", nil, nil)
	deadline.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	high := pod("h", nil, nil)
	high.Spec.PriorityClassName = "high"
	cross := pod("x", nil, nil)
	cross.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{Namespaces: []string{"other"}, TopologyKey: "k"}},
	}}
	exists := func(s corev1.ResourceQuotaScope) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists}
	}
	priority := func(op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: op, Values: values}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		req  corev1.ScopedResourceSelectorRequirement
		want bool
	}{
		{"BestEffort matches best effort", besteffort, exists(corev1.ResourceQuotaScopeBestEffort), true},
		{"BestEffort skips burstable", burstable, exists(corev1.ResourceQuotaScopeBestEffort), false},
		{"NotBestEffort matches burstable", burstable, exists(corev1.ResourceQuotaScopeNotBestEffort), true},
		{"Terminating matches deadline", deadline, exists(corev1.ResourceQuotaScopeTerminating), true},
		{"Terminating skips no deadline", besteffort, exists(corev1.ResourceQuotaScopeTerminating), false},
		{"NotTerminating matches no deadline", besteffort, exists(corev1.ResourceQuotaScopeNotTerminating), true},
		{"PriorityClass In matches", high, priority(corev1.ScopeSelectorOpIn, "high"), true},
		{"PriorityClass In skips other", besteffort, priority(corev1.ScopeSelectorOpIn, "high"), false},
		{"PriorityClass NotIn matches unset", besteffort, priority(corev1.ScopeSelectorOpNotIn, "high"), true},
		{"PriorityClass Exists needs a class", besteffort, priority(corev1.ScopeSelectorOpExists), false},
		{"PriorityClass Exists matches a class", high, priority(corev1.ScopeSelectorOpExists), true},
		{"PriorityClass DoesNotExist matches unset", besteffort, priority(corev1.ScopeSelectorOpDoesNotExist), true},
		{"CrossNamespacePodAffinity matches", cross, exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity), true},
		{"CrossNamespacePodAffinity skips plain", besteffort, exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity), false},
		{"QoS from status wins", func() *corev1.Pod {
			p := burstable.DeepCopy()
			p.Status.QOSClass = corev1.PodQOSBestEffort
			return p
		}(), exists(corev1.ResourceQuotaScopeBestEffort), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podMatches(tt.pod, []corev1.ScopedResourceSelectorRequirement{tt.req}); got != tt.want {
				t.Errorf("podMatches = %v, want %v", got, tt.want)
			}
		})
	}
}
