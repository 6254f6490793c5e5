package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Expected values: upstream pkg/apis/core/v1/defaults.go, the function named
// in each case, and zz_generated.defaults.go for the ResourceList rounding.

func TestNamespace(t *testing.T) {
	runDefaulting(t, Namespace, []defaultingCase[corev1.Namespace]{
		{
			// SetDefaults_Namespace and SetDefaults_NamespaceStatus.
			name: "named namespace gets its name label and phase Active",
			in:   &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"env": "dev"}}},
			want: &corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"env": "dev", "kubernetes.io/metadata.name": "team-a"}},
				Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
			},
		},
		{
			name: "label is corrected to the name",
			in:   &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"kubernetes.io/metadata.name": "a"}}},
			want: &corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"kubernetes.io/metadata.name": "b"}},
				Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
			},
		},
		{
			name: "generateName only gets no label",
			in:   &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tmp-"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tmp-"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
		},
	})
}

func TestNode(t *testing.T) {
	runDefaulting(t, Node, []defaultingCase[corev1.Node]{
		{
			// SetDefaults_NodeStatus: allocatable = capacity when unset.
			name: "allocatable copied from capacity and rounded",
			in:   &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0005"), corev1.ResourcePods: resource.MustParse("110")}}},
			want: &corev1.Node{Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourcePods: resource.MustParse("110")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourcePods: resource.MustParse("110")},
			}},
		},
		{
			name: "explicit allocatable kept",
			in: &corev1.Node{Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")},
			}},
			want: &corev1.Node{Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")},
			}},
		},
		{
			name: "node without status stays empty",
			in:   &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
			want: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		},
	})
}

func TestLimitRange(t *testing.T) {
	q := resource.MustParse
	runDefaulting(t, LimitRange, []defaultingCase[corev1.LimitRange]{
		{
			// SetDefaults_LimitRangeItem: default from max, defaultRequest
			// from default, then from min.
			name: "container item filled from max default and min",
			in: &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type:    corev1.LimitTypeContainer,
				Max:     corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")},
				Min:     corev1.ResourceList{corev1.ResourceEphemeralStorage: q("1Mi"), corev1.ResourceCPU: q("100m")},
				Default: corev1.ResourceList{corev1.ResourceMemory: q("512Mi")},
			}}}},
			want: &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type:           corev1.LimitTypeContainer,
				Max:            corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")},
				Min:            corev1.ResourceList{corev1.ResourceEphemeralStorage: q("1Mi"), corev1.ResourceCPU: q("100m")},
				Default:        corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("512Mi")},
				DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("512Mi"), corev1.ResourceEphemeralStorage: q("1Mi")},
			}}}},
		},
		{
			name: "pod item untouched",
			in: &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceCPU: q("4")},
			}}}},
			want: &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceCPU: q("4")},
			}}}},
		},
	})
}

func TestResourceQuota(t *testing.T) {
	runDefaulting(t, ResourceQuota, []defaultingCase[corev1.ResourceQuota]{
		{
			// Only SetDefaults_ResourceList applies to quotas.
			name: "quantities rounded",
			in:   &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("0.0001")}}},
			want: &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("1m")}}},
		},
	})
}

func TestSecret(t *testing.T) {
	runDefaulting(t, Secret, []defaultingCase[corev1.Secret]{
		// SetDefaults_Secret.
		{name: "untyped secret is Opaque", in: &corev1.Secret{}, want: &corev1.Secret{Type: corev1.SecretTypeOpaque}},
		{name: "typed secret kept", in: &corev1.Secret{Type: corev1.SecretTypeTLS}, want: &corev1.Secret{Type: corev1.SecretTypeTLS}},
		{name: "stringData folded into data", in: &corev1.Secret{Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}, StringData: map[string]string{"b": "x", "c": "3"}},
			want: &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": []byte("1"), "b": []byte("x"), "c": []byte("3")}}},
	})
}

func TestConfigMap(t *testing.T) {
	// SetDefaults_ConfigMap: a nil data map becomes empty. JSON cannot show
	// the difference, so check the Go value.
	cm := &corev1.ConfigMap{}
	ConfigMap(cm)
	if cm.Data == nil || len(cm.Data) != 0 {
		t.Errorf("ConfigMap data = %#v, want an empty non-nil map", cm.Data)
	}
	cm = &corev1.ConfigMap{Data: map[string]string{"k": "v"}}
	ConfigMap(cm)
	if cm.Data["k"] != "v" || len(cm.Data) != 1 {
		t.Errorf("ConfigMap data = %#v, want it unchanged", cm.Data)
	}
}

func TestReplicationController(t *testing.T) {
	labels := map[string]string{"app": "web"}
	runDefaulting(t, ReplicationController, []defaultingCase[corev1.ReplicationController]{
		{
			// SetDefaults_ReplicationController; Replicas +default=1.
			name: "selector and labels from template",
			in: &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
			}}},
			want: &corev1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.ReplicationControllerSpec{
					Replicas: new(int32(1)),
					Selector: labels,
					Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: defaultedSpec(corev1.PodSpec{})},
				},
			},
		},
		{
			name: "own selector and labels kept",
			in: &corev1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "x"}},
				Spec: corev1.ReplicationControllerSpec{Replicas: new(int32(0)), Selector: map[string]string{"app": "web", "v": "1"}, Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
				}},
			},
			want: &corev1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "x"}},
				Spec: corev1.ReplicationControllerSpec{
					Replicas: new(int32(0)),
					Selector: map[string]string{"app": "web", "v": "1"},
					Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: defaultedSpec(corev1.PodSpec{})},
				},
			},
		},
		{
			name: "no template",
			in:   &corev1.ReplicationController{},
			want: &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Replicas: new(int32(1))}},
		},
	})
}
