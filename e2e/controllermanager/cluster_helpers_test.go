package controllermanager_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// clusterNamespace creates a namespace named for the test and deletes it
// when the test ends.
func clusterNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

func ownerRef(apiVersion, kind, name, uid string, block bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name}
	r.UID = typesUID(uid)
	if block {
		r.BlockOwnerDeletion = &block
	}
	return r
}

// configMap creates a ConfigMap with the given owners and finalizers.
func configMap(t *testing.T, cs kubernetes.Interface, ns, name string, owners []metav1.OwnerReference, finalizers ...string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners, Finalizers: finalizers},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s: %v", name, err)
	}
	return cm
}

// configMapGone reports whether the ConfigMap is gone.
func configMapGone(cs kubernetes.Interface, ns, name string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
}

// dropFinalizers removes every finalizer of a ConfigMap.
func dropFinalizers(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	_, err := cs.CoreV1().ConfigMaps(ns).Patch(context.Background(), name, "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("drop finalizers of %s: %v", name, err)
	}
}

// fakeNode registers a Node with no kubelet behind it, Ready, so pods can
// be bound to it and the EndpointSlice controller finds their node.
func fakeNode(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ctx := context.Background()
	name := prefix + "-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 60 {
		name = name[:60]
	}
	name = strings.Trim(name, "-")
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	// The node lifecycle controller writes to a new Node (taints, its
	// Ready=Unknown condition) at the same time: retry on conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("node status: %v", err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// boundPod creates a pod already bound to node, as the scheduler would.
func boundPod(t testing.TB, cs kubernetes.Interface, ns, name, node string, labels map[string]string, ports ...corev1.ContainerPort) *corev1.Pod {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Ports: ports}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("create pod %s: %v", name, err)
		return &corev1.Pod{}
	}
	return p
}

// setPodStatus plays the kubelet: the pod runs with ip and is Ready or not.
func setPodStatus(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, ip string, ready bool) (*corev1.Pod, error) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p := pod.DeepCopy()
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = ip
	p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	return cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

func policyv1PDB(name string, minAvailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: minAvailable,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}},
		},
	}
}

// evict asks the eviction API to evict a pod.
func evict(ctx context.Context, cs kubernetes.Interface, ns, name string) error {
	return cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
}
