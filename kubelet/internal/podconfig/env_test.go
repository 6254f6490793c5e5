package podconfig

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B": "beta"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "alpha"},
		{"x-$(A)-$(B)-y", "x-alpha-beta-y"},
		{"$(MISSING)", "$(MISSING)"},
		{"$$(A)", "$(A)"},
		{"$(A", "$(A"},
		{"cost $5", "cost $5"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := expand(tc.in, lookup); got != tc.want {
				t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestPodField(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u", Labels: map[string]string{"a": "1", "b": "2"}},
		Spec:       corev1.PodSpec{NodeName: "n", ServiceAccountName: "sa"},
	}
	tests := []struct{ path, want string }{
		{"metadata.name", "p"},
		{"metadata.namespace", "ns"},
		{"metadata.uid", "u"},
		{"metadata.labels['a']", "1"},
		{"metadata.labels", "a=\"1\"\nb=\"2\""},
		{"spec.nodeName", "n"},
		{"spec.serviceAccountName", "sa"},
		{"status.podIP", "10.1.0.5"},
		{"status.podIPs", "10.1.0.5,fd00::5"},
		{"status.hostIP", "10.0.0.1"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, err := PodField(pod, tc.path, []string{"10.1.0.5", "fd00::5"}, []string{"10.0.0.1"})
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := PodField(pod, "spec.nothing", nil, nil); err == nil {
		t.Error("unknown field accepted")
	}
}

func TestContainerResource(t *testing.T) {
	c := &corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
	}}
	unlimited := &corev1.Container{Name: "unlimited"}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{*c, *unlimited}}}
	podLimited := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{*unlimited},
		Resources:  &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}},
	}}
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Gi"),
		"hugepages-2Mi":                 resource.MustParse("0"),
	}
	tests := []struct {
		name                    string
		pod                     *corev1.Pod
		container               *corev1.Container
		resource, divisor, want string
	}{
		{"limits.cpu rounds up", pod, c, "limits.cpu", "", "2"},
		{"limits.cpu in millicores", pod, c, "limits.cpu", "1m", "1500"},
		{"requests.cpu", pod, c, "requests.cpu", "1m", "250"},
		{"limits.memory in Mi", pod, c, "limits.memory", "1Mi", "64"},
		{"limits.memory", pod, c, "limits.memory", "", "67108864"},
		{"unset limits.cpu is allocatable", pod, unlimited, "limits.cpu", "", "4"},
		{"unset limits.cpu in millicores", pod, unlimited, "limits.cpu", "1m", "4000"},
		{"unset limits.memory is allocatable", pod, unlimited, "limits.memory", "1Gi", "8"},
		{"unset limits.ephemeral-storage is allocatable", pod, unlimited, "limits.ephemeral-storage", "1Gi", "10"},
		{"unset requests stay 0", pod, unlimited, "requests.memory", "", "0"},
		{"unset hugepages limit is not defaulted", pod, unlimited, "limits.hugepages-2Mi", "", "0"},
		{"pod-level limit bounds an unset one", podLimited, unlimited, "limits.memory", "1Mi", "32"},
		{"pod-level limit leaves others to allocatable", podLimited, unlimited, "limits.cpu", "", "4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := &corev1.ResourceFieldSelector{Resource: tc.resource}
			if tc.divisor != "" {
				ref.Divisor = resource.MustParse(tc.divisor)
			}
			got, err := ContainerResource(tc.pod, tc.container, ref, allocatable)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestContainerEnv(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "env", Namespace: "default", UID: "env-uid"},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
	}
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}, Data: map[string]string{"K": "from-cm", "X": "x"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Data: map[string][]byte{"P": []byte("secret")}},
	)
	b := &Builder{Client: client, HostIPs: []string{"10.0.0.1"}}
	ctx := context.Background()
	c := &corev1.Container{
		Name:    "app",
		EnvFrom: []corev1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
		Env: []corev1.EnvVar{
			{Name: "PLAIN", Value: "v"},
			{Name: "REF", Value: "$(PLAIN)-$(CM_K)"},
			{Name: "FROMCM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "K"}}},
			{Name: "FROMSECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "P"}}},
			{Name: "OPTIONAL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "K", Optional: ptrTo(true)}}},
			{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		},
	}
	env, err := b.containerEnv(ctx, pod, c, []string{"10.1.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		got[kv.Key] = string(kv.Value)
	}
	want := map[string]string{"CM_K": "from-cm", "CM_X": "x", "PLAIN": "v", "REF": "v-from-cm", "FROMCM": "from-cm", "FROMSECRET": "secret", "NODE": "node-1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["OPTIONAL"]; ok {
		t.Error("optional missing configmap set a variable")
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "BAD", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "missing"}}})
	if _, err := b.containerEnv(ctx, pod, c, nil); err == nil {
		t.Error("missing required key accepted")
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestQOSClass(t *testing.T) {
	limited := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: limited}}}}}
	if got := QOSClass(pod); got != corev1.PodQOSGuaranteed {
		t.Errorf("computed: got %s, want Guaranteed", got)
	}
	pod.Status.QOSClass = corev1.PodQOSBurstable
	if got := QOSClass(pod); got != corev1.PodQOSBurstable {
		t.Errorf("recorded: got %s, want the recorded Burstable", got)
	}
}

func TestCapName(t *testing.T) {
	for in, want := range map[corev1.Capability]string{"NET_ADMIN": "NET_ADMIN", "net_bind_service": "NET_BIND_SERVICE", "CAP_SYS_TIME": "SYS_TIME", "ALL": "ALL"} {
		if got := capName(in); got != want {
			t.Errorf("capName(%q) = %q, want %q (CRI names capabilities without CAP_)", in, got, want)
		}
	}
}
