package addons

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"
)

func TestWorkloads(t *testing.T) {
	manifest := `---
# Source: trireme-addons/charts/coredns/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
---
# Source: trireme-addons/charts/coredns/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
---
# Source: trireme-addons/charts/flannel/templates/daemonset.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-flannel
---
# Source: trireme-addons/templates/other.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: not-an-addon
`
	want := map[string][]Workload{
		"coredns": {{Kind: "Deployment", Namespace: "kube-system", Name: "coredns"}},
		"flannel": {{Kind: "DaemonSet", Namespace: Namespace, Name: "kube-flannel"}},
	}
	if got := Workloads(manifest); !reflect.DeepEqual(got, want) {
		t.Errorf("Workloads = %v, want %v", got, want)
	}
}

func TestDescribePods(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sel := labels.SelectorFromSet(labels.Set{"app": "x"})
	pod := func(mutate func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x-1", Labels: map[string]string{"app": "x"},
			CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}}
		mutate(&p)
		return p
	}
	waiting := func(reason string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}}}
		}
	}
	for _, tc := range []struct {
		name        string
		pod         corev1.Pod
		want        string
		wantFailing bool
	}{
		{"crash loop", pod(waiting("CrashLoopBackOff")), "pod x-1: container c: CrashLoopBackOff: details", true},
		{"image missing", pod(waiting("ErrImageNeverPull")), "ErrImageNeverPull", true},
		{"creating", pod(waiting("ContainerCreating")), "", false},
		{"restarting", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 3, State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}}
		}), "exited 2 (Error), 3 restarts", true},
		{"unschedulable a while", pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available"}}
		}), "Unschedulable: 0/1 nodes are available", true},
		{"unschedulable just now", pod(func(p *corev1.Pod) {
			p.CreationTimestamp = metav1.NewTime(now.Add(-time.Second))
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable}}
		}), "Unschedulable", false},
		{"other workload's pod", pod(func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "y"}
			waiting("CrashLoopBackOff")(p)
		}), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, failing := describePods([]corev1.Pod{tc.pod}, sel, now)
			if !strings.Contains(got, tc.want) || (tc.want == "" && got != "") || failing != tc.wantFailing {
				t.Errorf("describePods = %q, %v; want %q, %v", got, failing, tc.want, tc.wantFailing)
			}
		})
	}
}

func TestReadyDaemonSet(t *testing.T) {
	ds := func(generation, observed int64, desired, ready, updated int32) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "flannel", Namespace: Namespace, Generation: generation},
			Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "flannel"}}},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: observed, DesiredNumberScheduled: desired,
				NumberReady: ready, UpdatedNumberScheduled: updated},
		}
	}
	for _, tc := range []struct {
		name string
		ds   *appsv1.DaemonSet
		want bool
	}{
		{"every pod ready", ds(1, 1, 3, 3, 3), true},
		{"a pod not ready", ds(1, 1, 3, 2, 3), false},
		{"a pod of the old template", ds(2, 2, 3, 3, 2), false},
		{"not yet seen by the controller", ds(1, 0, 0, 0, 0), false},
		{"no node to run on, seen", ds(1, 1, 0, 0, 0), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientset(tc.ds)
			ok, why, err := ready(context.Background(), c, Workload{Kind: "DaemonSet", Namespace: Namespace, Name: "flannel"})
			if err != nil || ok != tc.want {
				t.Errorf("ready = %v (%s, %v), want %v", ok, why, err, tc.want)
			}
		})
	}
}
