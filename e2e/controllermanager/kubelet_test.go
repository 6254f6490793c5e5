package controllermanager_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// kubelet plays the kubelet for one namespace: decide says what each new
// pod becomes (nil leaves it pending), and observe sees the namespace's
// pods after every change, in watch order.
type kubelet struct {
	cs      kubernetes.Interface
	decide  func(*corev1.Pod) *corev1.PodStatus
	observe func(pods []*corev1.Pod)
	mu      sync.Mutex
	done    map[string]bool
	store   cache.Store
	logf    func(format string, args ...any)
}

// startKubelet runs k until the test ends.
func startKubelet(t testing.TB, cs kubernetes.Interface, ns string, decide func(*corev1.Pod) *corev1.PodStatus, observe func([]*corev1.Pod)) *kubelet {
	k := &kubelet{cs: cs, decide: decide, observe: observe, done: map[string]bool{}, logf: t.Logf}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	k.store = inf.GetStore()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.changed(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { k.changed(obj.(*corev1.Pod)) },
		DeleteFunc: func(any) { k.changed(nil) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return k
}

func (k *kubelet) changed(pod *corev1.Pod) {
	if k.observe != nil {
		var all []*corev1.Pod
		for _, o := range k.store.List() {
			all = append(all, o.(*corev1.Pod))
		}
		k.observe(all)
	}
	if pod == nil || pod.DeletionTimestamp != nil || pod.Status.Phase != "" && pod.Status.Phase != corev1.PodPending {
		return
	}
	k.mu.Lock()
	if k.done[string(pod.UID)] {
		k.mu.Unlock()
		return
	}
	k.done[string(pod.UID)] = true
	k.mu.Unlock()
	go k.apply(pod.DeepCopy())
}

func (k *kubelet) apply(pod *corev1.Pod) {
	st := k.decide(pod)
	if st == nil {
		return
	}
	st.QOSClass = pod.Status.QOSClass
	pod.Status = *st
	_, err := k.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		// Let a later event retry.
		k.logf("kubelet: update status of pod %s: %v", pod.Name, err)
		k.mu.Lock()
		delete(k.done, string(pod.UID))
		k.mu.Unlock()
	}
}

// running is the status of a started, ready pod.
func running(*corev1.Pod) *corev1.PodStatus {
	now := metav1.NewTime(time.Now())
	return &corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: &now,
		PodIP:     "10.244.0.10",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
}

// failed is the status of a pod whose container exited with code 1.
func failed(pod *corev1.Pod) *corev1.PodStatus {
	now := metav1.NewTime(time.Now())
	st := &corev1.PodStatus{Phase: corev1.PodFailed, StartTime: &now}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: now}},
		})
	}
	return st
}

// succeeded is the status of a pod whose containers exited with code 0.
func succeeded(pod *corev1.Pod) *corev1.PodStatus {
	st := failed(pod)
	st.Phase = corev1.PodSucceeded
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].State.Terminated.ExitCode = 0
		st.ContainerStatuses[i].State.Terminated.Reason = "Completed"
	}
	return st
}
