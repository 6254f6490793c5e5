package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestUsage(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "64Mi", "example.com/gpu", "1"), Limits: rl("cpu", "200m", "memory", "64Mi")}},
		{Name: "b", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m"), Limits: rl("cpu", "100m")}},
	}}}
	done := pod.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	lb := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}}
	pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: new("fast"), Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "5Gi")}}}
	tests := []struct {
		name string
		eval *evaluator
		obj  runtime.Object
		want corev1.ResourceList
	}{
		{"pod compute", newPodEvaluator(nil), pod, rl("pods", "1", "count/pods", "1", "cpu", "200m", "requests.cpu", "200m", "limits.cpu", "300m",
			"memory", "64Mi", "requests.memory", "64Mi", "limits.memory", "64Mi", "requests.example.com/gpu", "1")},
		{"finished pod uses nothing", newPodEvaluator(nil), done, rl()},
		{"load balancer service", newServiceEvaluator(nil), lb, rl("services", "1", "count/services", "1", "services.loadbalancers", "1", "services.nodeports", "2")},
		{"cluster IP service", newServiceEvaluator(nil), &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}, rl("services", "1", "count/services", "1", "services.loadbalancers", "0", "services.nodeports", "0")},
		{"claim with class", newPVCEvaluator(nil), pvc, rl("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "5Gi",
			"fast.storageclass.storage.k8s.io/requests.storage", "5Gi", "fast.storageclass.storage.k8s.io/persistentvolumeclaims", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.eval.Usage(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if !quota.Equals(got, tt.want) {
				t.Fatalf("usage %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPodConstraints(t *testing.T) {
	tests := []struct {
		name     string
		required []corev1.ResourceName
		res      corev1.ResourceRequirements
		wantErr  string
	}{
		{"requests present", []corev1.ResourceName{corev1.ResourceRequestsCPU}, corev1.ResourceRequirements{Requests: rl("cpu", "1")}, ""},
		{"request missing", []corev1.ResourceName{corev1.ResourceRequestsMemory}, corev1.ResourceRequirements{Requests: rl("cpu", "1")}, "must specify requests.memory"},
		{"limit missing", []corev1.ResourceName{corev1.ResourceLimitsCPU}, corev1.ResourceRequirements{}, "must specify limits.cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: tt.res}}}}
			err := newPodEvaluator(nil).Constraints(tt.required, pod)
			if (tt.wantErr == "") != (err == nil) || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPodScopes(t *testing.T) {
	besteffort := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	guaranteed := &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "high", ActiveDeadlineSeconds: new(int64(60)), Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}}}}
	tests := []struct {
		name  string
		scope corev1.ScopedResourceSelectorRequirement
		pod   *corev1.Pod
		want  bool
	}{
		{"best effort", corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeBestEffort}, besteffort, true},
		{"not best effort", corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeNotBestEffort}, besteffort, false},
		{"terminating", corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeTerminating}, guaranteed, true},
		{"priority class in", corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}, guaranteed, true},
		{"priority class not in", corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpNotIn, Values: []string{"high"}}, guaranteed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := podScope(tt.scope, tt.pod)
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}

func TestUsageStats(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "other"}},
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	evals := Evaluators(factory)
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	stats, err := evals[0].UsageStats(quota.UsageStatsOptions{Namespace: "ns", Resources: []corev1.ResourceName{corev1.ResourcePods}})
	if err != nil {
		t.Fatal(err)
	}
	if n := stats.Used[corev1.ResourcePods]; n.Value() != 2 {
		t.Fatalf("pods used %s, want 2", n.String())
	}
}
