package controllermanager_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testwait"
)

const endpointsTimeout = 20 * time.Second

// sliceEndpoints returns the endpoints of the Service's controller-managed
// slices by pod name, and the ports of the first slice.
func sliceEndpoints(ctx context.Context, cs kubernetes.Interface, ns, svc string) (map[string]discoveryv1.Endpoint, []discoveryv1.EndpointPort, error) {
	sel := labels.Set{discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}.String()
	list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, nil, err
	}
	out := map[string]discoveryv1.Endpoint{}
	var ports []discoveryv1.EndpointPort
	for _, s := range list.Items {
		if ports == nil {
			ports = s.Ports
		}
		for _, e := range s.Endpoints {
			if e.TargetRef != nil {
				out[e.TargetRef.Name] = e
			}
		}
	}
	return out, ports, nil
}

// TestEndpointSliceFollowsPodReadiness: a Service's slice lists a pod
// once it runs (ready=false), marks it ready when it becomes Ready, with
// the named target port resolved, and drops it when it is deleted; the
// legacy Endpoints follow.
func TestEndpointSliceFollowsPodReadiness(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	ns := clusterNamespace(t, cs, "eps")
	waitDefaultServiceAccount(t, cs, ns)
	node := fakeNode(t, cs, "eps")
	_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http-alt")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := boundPod(t, cs, ns, "web-1", node, map[string]string{"app": "web"}, corev1.ContainerPort{Name: "http-alt", ContainerPort: 8080})
	pod, err = setPodStatus(ctx, cs, pod, "10.244.7.10", false)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "not-ready endpoint listed", func(ctx context.Context) (bool, error) {
		eps, ports, err := sliceEndpoints(ctx, cs, ns, "web")
		e, ok := eps["web-1"]
		return err == nil && ok && e.Conditions.Ready != nil && !*e.Conditions.Ready &&
			len(ports) == 1 && *ports[0].Port == 8080, err
	})
	if _, err := setPodStatus(ctx, cs, pod, "10.244.7.10", true); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "ready endpoint listed", func(ctx context.Context) (bool, error) {
		eps, _, err := sliceEndpoints(ctx, cs, ns, "web")
		e, ok := eps["web-1"]
		return err == nil && ok && e.Conditions.Ready != nil && *e.Conditions.Ready &&
			e.Conditions.Serving != nil && *e.Conditions.Serving && e.Addresses[0] == "10.244.7.10" &&
			e.NodeName != nil && *e.NodeName == node && e.Zone != nil && *e.Zone == "zone-a", err
	})
	testwait.For(t, endpointsTimeout, "legacy Endpoints ready address", func(ctx context.Context) (bool, error) {
		ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 1 &&
			ep.Subsets[0].Addresses[0].IP == "10.244.7.10" && ep.Subsets[0].Ports[0].Port == 8080, err
	})
	zero := int64(0)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "web-1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "deleted pod dropped", func(ctx context.Context) (bool, error) {
		eps, _, err := sliceEndpoints(ctx, cs, ns, "web")
		return err == nil && len(eps) == 0, err
	})
	testwait.For(t, endpointsTimeout, "legacy Endpoints emptied", func(ctx context.Context) (bool, error) {
		ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && len(ep.Subsets) == 0, err
	})
}

// TestEndpointSlicePublishNotReadyAndSplit: publishNotReadyAddresses
// lists unready pods as ready, and 150 pods take two slices.
func TestEndpointSlicePublishNotReadyAndSplit(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	ns := clusterNamespace(t, cs, "eps-many")
	waitDefaultServiceAccount(t, cs, ns)
	node := fakeNode(t, cs, "epsm")
	var err error
	const n = 150
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p := boundPod(t, cs, ns, fmt.Sprintf("db-%d", i), node, map[string]string{"app": "db"})
			if _, err := setPodStatus(ctx, cs, p, fmt.Sprintf("10.244.8.%d", i+1), false); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	_, err = cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
			Selector: map[string]string{"app": "db"},
			Ports:    []corev1.ServicePort{{Name: "sql", Port: 5432}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "150 endpoints in slices of at most 100", func(ctx context.Context) (bool, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=db"})
		if err != nil {
			return false, err
		}
		total := 0
		for _, s := range list.Items {
			if len(s.Endpoints) > 100 {
				return false, fmt.Errorf("slice %s holds %d endpoints", s.Name, len(s.Endpoints))
			}
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || !*e.Conditions.Ready {
					return false, fmt.Errorf("endpoint %v not ready despite publishNotReadyAddresses", e.Addresses)
				}
			}
			total += len(s.Endpoints)
		}
		return total == n && len(list.Items) == 2, nil
	})
}

// TestEndpointSliceMirroring: a selector-less Service's hand-written
// Endpoints appear as a mirrored EndpointSlice.
func TestEndpointSliceMirroring(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	ns := clusterNamespace(t, cs, "eps-mirror")
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "external"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "external"},
		Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "192.168.50.1"}, {IP: "192.168.50.2"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "192.168.50.3"}},
			Ports:             []corev1.EndpointPort{{Name: "https", Port: 8443, Protocol: corev1.ProtocolTCP}},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "mirrored slice", func(ctx context.Context) (bool, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelManagedBy + "=endpointslicemirroring-controller.k8s.io," + discoveryv1.LabelServiceName + "=external"})
		if err != nil || len(list.Items) != 1 {
			return false, err
		}
		s := list.Items[0]
		ready := 0
		for _, e := range s.Endpoints {
			if *e.Conditions.Ready {
				ready++
			}
		}
		return len(s.Endpoints) == 3 && ready == 2 && *s.Ports[0].Port == 8443, nil
	})
	if err := cs.CoreV1().Endpoints(ns).Delete(ctx, "external", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "mirrored slice removed", func(ctx context.Context) (bool, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=external"})
		return err == nil && len(list.Items) == 0, err
	})
}

// TestEvictionHonoursPDB: with two ready pods and minAvailable 2 the
// disruption controller allows no disruption and the eviction API refuses;
// with minAvailable 1 it allows one and the eviction goes through.
func TestEvictionHonoursPDB(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	ns := clusterNamespace(t, cs, "pdb")
	waitDefaultServiceAccount(t, cs, ns)
	node := fakeNode(t, cs, "pdb")
	for i := range 2 {
		p := boundPod(t, cs, ns, fmt.Sprintf("app-%d", i), node, map[string]string{"app": "guarded"})
		if _, err := setPodStatus(ctx, cs, p, fmt.Sprintf("10.244.9.%d", i+1), true); err != nil {
			t.Fatal(err)
		}
	}
	two := intstr.FromInt32(2)
	pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, policyv1PDB("guard", &two), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "PDB status computed", func(ctx context.Context) (bool, error) {
		p, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "guard", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 2 &&
			p.Status.DesiredHealthy == 2 && p.Status.ExpectedPods == 2 && p.Status.DisruptionsAllowed == 0 &&
			conditionIs(p.Status.Conditions, "DisruptionAllowed", metav1.ConditionFalse), err
	})
	err = evict(ctx, cs, ns, "app-0")
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("eviction against a PDB allowing nothing: err %v, want 429 TooManyRequests", err)
	}
	one := intstr.FromInt32(1)
	pdb, err = cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, pdb.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Spec.MinAvailable = &one
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Update(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, endpointsTimeout, "one disruption allowed", func(ctx context.Context) (bool, error) {
		p, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "guard", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1 &&
			conditionIs(p.Status.Conditions, "DisruptionAllowed", metav1.ConditionTrue), err
	})
	if err := evict(ctx, cs, ns, "app-0"); err != nil {
		t.Fatalf("eviction the PDB allows: %v", err)
	}
	// The evicted pod counts as disrupted: a second eviction is refused.
	if err := evict(ctx, cs, ns, "app-1"); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("second eviction: err %v, want 429 TooManyRequests", err)
	}
}

func conditionIs(conds []metav1.Condition, t string, s metav1.ConditionStatus) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == s
		}
	}
	return false
}
