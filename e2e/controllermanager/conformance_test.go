package controllermanager_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

// The tests here replay what upstream's conformance specs of the
// controllers check, one each, with the test playing the kubelet.

// TestJobAdoptsOrphansAndReleasesPods: "Job should adopt matching orphans
// and release non-matching pods"; the released pod also loses its
// tracking finalizer, so it can be deleted.
func TestJobAdoptsOrphansAndReleasesPods(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "job-adopt")
	ctx := context.Background()
	startKubelet(t, cs, ns, running, nil)
	job, err := cs.BatchV1().Jobs(ns).Create(ctx, batchJob("adopt-release", 4, 2, 6), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	waitForIn(t, ns, 30*time.Second, "2 running pods", func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=adopt-release"})
		if err != nil || len(pods.Items) != 2 {
			return false, err
		}
		pod = pods.Items[0]
		return pods.Items[0].Status.Phase == corev1.PodRunning && pods.Items[1].Status.Phase == corev1.PodRunning, nil
	})
	updatePod := func(mutate func(*corev1.Pod)) {
		t.Helper()
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(p)
		if _, err := cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	updatePod(func(p *corev1.Pod) { p.OwnerReferences = nil })
	waitForIn(t, ns, 30*time.Second, "pod re-adopted", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.Kind == "Job" && ref.UID == job.UID, nil
	})
	updatePod(func(p *corev1.Pod) { p.Labels = nil })
	waitForIn(t, ns, 30*time.Second, "pod released with no finalizer", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(p) == nil && len(p.Finalizers) == 0, err
	})
}

// TestReplicationControllerSurfacesQuotaFailure: "ReplicationController
// should surface a failure condition on a common issue like exceeded
// quota".
func TestReplicationControllerSurfacesQuotaFailure(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "rc-quota")
	ctx := context.Background()
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "condition-test"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForIn(t, ns, 30*time.Second, "quota status", func(ctx context.Context) (bool, error) {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "condition-test", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		hard := q.Status.Hard[corev1.ResourcePods]
		return hard.Value() == 2, nil
	})
	labels := map[string]string{"name": "condition-test"}
	rc, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "condition-test"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To(int32(3)), Selector: labels,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/agnhost"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failure := func(rc *corev1.ReplicationController) *corev1.ReplicationControllerCondition {
		for i, c := range rc.Status.Conditions {
			if c.Type == corev1.ReplicationControllerReplicaFailure {
				return &rc.Status.Conditions[i]
			}
		}
		return nil
	}
	waitForIn(t, ns, time.Minute, "ReplicaFailure condition", func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().ReplicationControllers(ns).Get(ctx, rc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := failure(got)
		return got.Status.ObservedGeneration >= rc.Generation && c != nil &&
			c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate", nil
	})
	// A patch, not a read and an update: the controller writes the RC's
	// status meanwhile, which would make the update conflict.
	rc, err = cs.CoreV1().ReplicationControllers(ns).Patch(ctx, rc.Name, types.MergePatchType,
		[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitForIn(t, ns, time.Minute, "ReplicaFailure condition removed", func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().ReplicationControllers(ns).Get(ctx, rc.Name, metav1.GetOptions{})
		return err == nil && got.Status.ObservedGeneration >= rc.Generation && failure(got) == nil, err
	})
}

// TestEndpointSlicesForMatchingPods: "EndpointSlice should create
// Endpoints and EndpointSlices for Pods matching a Service" — a numeric
// target port, a named one resolved per pod (one slice per port), and
// slices made again after they are deleted.
func TestEndpointSlicesForMatchingPods(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	ns := clusterNamespace(t, cs, "eps-match")
	waitDefaultServiceAccount(t, cs, ns)
	node := fakeNode(t, cs, "eps-match")
	pod1 := boundPod(t, cs, ns, "pod1", node, map[string]string{"pod1": "on", "shared12": "on"},
		corev1.ContainerPort{Name: "example-name", ContainerPort: 3000})
	pod2 := boundPod(t, cs, ns, "pod2", node, map[string]string{"pod2": "on", "shared12": "on"},
		corev1.ContainerPort{Name: "example-name", ContainerPort: 3001}, corev1.ContainerPort{Name: "other-port", ContainerPort: 3002})
	service := func(name string, selector map[string]string, port corev1.ServicePort) {
		t.Helper()
		_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Selector: selector, PublishNotReadyAddresses: true, Ports: []corev1.ServicePort{port}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	service("example-int-port", map[string]string{"pod1": "on"},
		corev1.ServicePort{Name: "example", Port: 80, TargetPort: intstr.FromInt32(3000), Protocol: corev1.ProtocolTCP})
	service("example-named-port", map[string]string{"shared12": "on"},
		corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("example-name"), Protocol: corev1.ProtocolTCP})
	var err error
	if pod1, err = setPodStatus(ctx, cs, pod1, "10.244.9.1", false); err != nil {
		t.Fatal(err)
	}
	if pod2, err = setPodStatus(ctx, cs, pod2, "10.244.9.2", false); err != nil {
		t.Fatal(err)
	}
	// expect checks what the spec checks of every slice of svc: one
	// endpoint per pod, by IP and target reference, on the port wanted
	// for that pod, named as the Service's port.
	expect := func(svc, portName string, wantSlices int, want map[*corev1.Pod]int32) {
		t.Helper()
		match := func(ctx context.Context) (bool, error) {
			list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
			if err != nil {
				return false, err
			}
			seen := 0
			for _, s := range list.Items {
				if len(s.Ports) != 1 || ptr.Deref(s.Ports[0].Name, "") != portName || ptr.Deref(s.Ports[0].Protocol, "") != corev1.ProtocolTCP {
					return false, fmt.Errorf("slice %s ports %v", s.Name, s.Ports)
				}
				for _, e := range s.Endpoints {
					i := slices.IndexFunc([]*corev1.Pod{pod1, pod2}, func(p *corev1.Pod) bool { return p.Status.PodIP == e.Addresses[0] })
					if i < 0 {
						return false, fmt.Errorf("slice %s: unexpected address %s", s.Name, e.Addresses[0])
					}
					p := []*corev1.Pod{pod1, pod2}[i]
					port, ok := want[p]
					if !ok || e.TargetRef == nil || e.TargetRef.Kind != "Pod" || e.TargetRef.Name != p.Name ||
						e.TargetRef.UID != p.UID || ptr.Deref(s.Ports[0].Port, 0) != port {
						return false, fmt.Errorf("slice %s: endpoint %+v on port %d", s.Name, e, ptr.Deref(s.Ports[0].Port, 0))
					}
					seen++
				}
			}
			if len(list.Items) < wantSlices || seen != len(want) {
				return false, fmt.Errorf("%d slices with %d endpoints", len(list.Items), seen)
			}
			return true, nil
		}
		var why error
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, endpointsTimeout, true, func(ctx context.Context) (bool, error) {
			ok, err := match(ctx)
			why = err
			return ok, nil
		}); err != nil {
			t.Fatalf("slices of %s: %v (last: %v)", svc, err, why)
		}
	}
	expect("example-int-port", "example", 1, map[*corev1.Pod]int32{pod1: 3000})
	expect("example-named-port", "http", 2, map[*corev1.Pod]int32{pod1: 3000, pod2: 3001})
	list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=example-named-port"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if err := cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect("example-named-port", "http", 2, map[*corev1.Pod]int32{pod1: 3000, pod2: 3001})
}

// TestEndpointsMadeByHandAreKept: "Endpoints should test the lifecycle of
// an Endpoint" — no Service of the Endpoints' name, so no controller
// touches it.
func TestEndpointsMadeByHandAreKept(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	ns := clusterNamespace(t, cs, "ep-manual")
	ep, err := cs.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "testservice", Labels: map[string]string{"test-endpoint-static": "true"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.24"}},
			Ports: []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep.Labels["test-service"] = "updated"
	if _, err := cs.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"metadata":{"labels":{"test-service":"patched"}},"subsets":[{"addresses":[{"ip":"10.0.0.25"}],"ports":[{"name":"http-test","port":8080}]}]}`
	if _, err := cs.CoreV1().Endpoints(ns).Patch(ctx, "testservice", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controllers had time to act on both changes.
	time.Sleep(2 * time.Second)
	got, err := cs.CoreV1().Endpoints(ns).Get(ctx, "testservice", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("endpoints made by hand: %v", err)
	}
	if got.Labels["test-service"] != "patched" || len(got.Subsets) != 1 || got.Subsets[0].Addresses[0].IP != "10.0.0.25" ||
		got.Subsets[0].Ports[0].Port != 8080 {
		t.Errorf("endpoints made by hand changed: %+v %+v", got.Labels, got.Subsets)
	}
}

// TestNamespaceDeletesPodsFirst: "OrderedNamespaceDeletion namespace
// deletion should delete pod first" — a pod held by a finalizer holds the
// namespace's ConfigMap until it is gone.
func TestNamespaceDeletesPodsFirst(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	ns := newNamespace(t, cs, "nsdeletetest")
	const finalizer = "e2e.example.com/finalizer"
	_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "test-pod", Finalizers: []string{finalizer}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/pause"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "test-configmap"},
		Data: map[string]string{"key": "value"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 30*time.Second, "NamespaceDeletionContentFailure condition", func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(n.Status.Conditions, func(c corev1.NamespaceCondition) bool {
			return c.Type == corev1.NamespaceDeletionContentFailure
		}), nil
	})
	testwait.For(t, 30*time.Second, "pod deleting", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "test-pod", metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp != nil, err
	})
	// The controller had passes enough to delete the ConfigMap, had it
	// not waited for the pod.
	time.Sleep(3 * time.Second)
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "test-configmap", metav1.GetOptions{}); err != nil {
		t.Fatalf("configmap deleted while a pod is left: %v", err)
	}
	patch := `{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + finalizer + `"]}}`
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "test-pod", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, time.Minute, "namespace gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestStatefulSetHaltsOnUnhealthyPods: "StatefulSet Scaling should happen
// in predictable order and halt if any stateful pod is unhealthy" and
// "Should recreate evicted statefulset" (a pod that ends Failed is made
// again).
func TestStatefulSetHaltsOnUnhealthyPods(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "sts-halt")
	ctx := context.Background()
	startKubelet(t, cs, ns, running, nil)
	labels := map[string]string{"app": "ss"}
	_, err := cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ss"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(1)), ServiceName: "test", Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "webserver", Image: "registry.example/httpd"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := func(ctx context.Context) ([]corev1.Pod, error) {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=ss"})
		if err != nil {
			return nil, err
		}
		return list.Items, nil
	}
	readyPods := func(n int) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			list, err := pods(ctx)
			if err != nil || len(list) != n {
				return false, err
			}
			for _, p := range list {
				if p.Status.Phase != corev1.PodRunning || !slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
					return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
				}) {
					return false, nil
				}
			}
			return true, nil
		}
	}
	setReady := func(ready bool) {
		t.Helper()
		list, err := pods(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range list {
			// The fake kubelet may be writing the same pod.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				p, err := cs.CoreV1().Pods(ns).Get(ctx, list[i].Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				_, err = setPodStatus(ctx, cs, p, fmt.Sprintf("10.244.8.%d", i+1), ready)
				return err
			})
			// Scale-down may delete an unready pod once those below it are
			// ready again.
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
	}
	scale := func(n int32) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := cs.AppsV1().StatefulSets(ns).GetScale(ctx, "ss", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Replicas = n
			_, err = cs.AppsV1().StatefulSets(ns).UpdateScale(ctx, "ss", s, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// holds checks for a while that the set keeps n pods, none deleting.
	holds := func(n int) {
		t.Helper()
		for range 20 {
			time.Sleep(100 * time.Millisecond)
			list, err := pods(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != n || slices.ContainsFunc(list, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil }) {
				t.Fatalf("%d pods while a pod is unready, want %d kept", len(list), n)
			}
		}
	}
	waitForIn(t, ns, 30*time.Second, "ss-0 ready", readyPods(1))
	setReady(false)
	scale(3)
	holds(1)
	setReady(true)
	waitForIn(t, ns, 30*time.Second, "3 pods ready", readyPods(3))
	setReady(false)
	scale(0)
	holds(3)
	setReady(true)
	waitForIn(t, ns, 30*time.Second, "no pod left", func(ctx context.Context) (bool, error) {
		list, err := pods(ctx)
		return err == nil && len(list) == 0, err
	})

	scale(1)
	waitForIn(t, ns, 30*time.Second, "ss-0 ready again", readyPods(1))
	p, err := cs.CoreV1().Pods(ns).Get(ctx, "ss-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := failed(p)
	st.QOSClass = p.Status.QOSClass
	p.Status = *st
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForIn(t, ns, 30*time.Second, "failed ss-0 made again", func(ctx context.Context) (bool, error) {
		again, err := cs.CoreV1().Pods(ns).Get(ctx, "ss-0", metav1.GetOptions{})
		return err == nil && again.UID != p.UID && again.Status.Phase == corev1.PodRunning, nil
	})
}
