package controllermanager_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testwait"
)

// namespaceKinds creates one object of each of 20 kinds; i makes names
// unique. None of them makes a controller create more objects.
var namespaceKinds = []struct {
	kind   string
	create func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error
}{
	{"ConfigMap", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("cm", i), Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		return err
	}},
	{"Secret", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: meta("secret", i), StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		return err
	}},
	{"ServiceAccount", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta("sa", i)}, metav1.CreateOptions{})
		return err
	}},
	{"Service", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta("svc", i), Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": fmt.Sprint("x", i)}, Ports: []corev1.ServicePort{{Port: 80}},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"Endpoints", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: meta("ep", i)}, metav1.CreateOptions{})
		return err
	}},
	{"EndpointSlice", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: meta("eps", i), AddressType: discoveryv1.AddressTypeIPv4}, metav1.CreateOptions{})
		return err
	}},
	{"Pod", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: meta("pod", i), Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"PodTemplate", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: meta("pt", i), Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"LimitRange", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: meta("lr", i), Spec: corev1.LimitRangeSpec{
			// A claim limit: a container limit would refuse the test's pods.
			Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")}}},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"ResourceQuota", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("rq", i), Spec: corev1.ResourceQuotaSpec{
			// Claims only: quota admission refuses what a quota counts until
			// the quota's status is known, and the test creates no claims.
			Hard: corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: resource.MustParse("1000")},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"ReplicationController", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		zero := int32(0)
		labels := map[string]string{"rc": fmt.Sprint(i)}
		_, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: meta("rc", i), Spec: corev1.ReplicationControllerSpec{
			Replicas: &zero, Selector: labels,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"Role", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta("role", i)}, metav1.CreateOptions{})
		return err
	}},
	{"RoleBinding", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("rb", i),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "someone"}},
		}, metav1.CreateOptions{})
		return err
	}},
	{"Lease", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: meta("lease", i)}, metav1.CreateOptions{})
		return err
	}},
	{"PodDisruptionBudget", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		one := intstr.FromInt32(1)
		_, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: meta("pdb", i), Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pdb": fmt.Sprint(i)}},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"NetworkPolicy", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: meta("np", i)}, metav1.CreateOptions{})
		return err
	}},
	{"Ingress", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{ObjectMeta: meta("ing", i), Spec: networkingv1.IngressSpec{
			DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}},
		}}, metav1.CreateOptions{})
		return err
	}},
	{"Event", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: meta("ev", i),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "x"}, Reason: "Test", Message: "e2e", Type: corev1.EventTypeNormal,
		}, metav1.CreateOptions{})
		return err
	}},
	{"ControllerRevision", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.AppsV1().ControllerRevisions(ns).Create(ctx, &appsv1.ControllerRevision{ObjectMeta: meta("cr", i), Revision: 1,
			Data: runtime.RawExtension{Raw: []byte(`{}`)}}, metav1.CreateOptions{})
		return err
	}},
	{"HorizontalPodAutoscaler", func(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
		_, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("hpa", i), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "none"}, MaxReplicas: 2,
		}}, metav1.CreateOptions{})
		return err
	}},
}

func meta(prefix string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}
}

// waitDefaultServiceAccount waits for the namespace's default
// ServiceAccount, which pods need.
func waitDefaultServiceAccount(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	testwait.For(t, 30*time.Second, "default serviceaccount", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
}

// TestNamespaceDeletionEmptiesIt fills a namespace with 1,000 objects of 20
// kinds, deletes it with kubectl, and waits for it to be gone.
func TestNamespaceDeletionEmptiesIt(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "ns-bulk")
	waitDefaultServiceAccount(t, cs, ns)
	const perKind = 50
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, len(namespaceKinds)*perKind)
	sem := make(chan struct{}, 16)
	for _, k := range namespaceKinds {
		for i := range perKind {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := k.create(ctx, cs, ns, i); err != nil {
					errs <- fmt.Errorf("create %s %d: %w", k.kind, i, err)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(namespaceKinds) != 20 {
		t.Fatalf("%d kinds, want 20", len(namespaceKinds))
	}
	start := time.Now()
	if res := srv.Kubectl(t, "delete", "namespace", ns, "--wait=false"); res.ExitCode != 0 {
		t.Fatalf("kubectl delete namespace: %s", res)
	}
	testwait.For(t, 120*time.Second, "namespace removed", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	t.Logf("namespace with %d objects of %d kinds removed in %v", perKind*len(namespaceKinds), len(namespaceKinds), time.Since(start).Round(time.Millisecond))
}

// TestNamespaceDeletionConditions deletes a namespace holding an object
// with a finalizer: the namespace stays, its conditions say what remains,
// and it goes once the finalizer is removed.
func TestNamespaceDeletionConditions(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "ns-cond")
	configMap(t, cs, ns, "held", nil, "e2e.trireme.dev/hold")
	configMap(t, cs, ns, "free", nil)
	if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[corev1.NamespaceConditionType]corev1.ConditionStatus{
		corev1.NamespaceDeletionDiscoveryFailure: corev1.ConditionFalse,
		corev1.NamespaceDeletionGVParsingFailure: corev1.ConditionFalse,
		corev1.NamespaceDeletionContentFailure:   corev1.ConditionFalse,
		corev1.NamespaceContentRemaining:         corev1.ConditionTrue,
		corev1.NamespaceFinalizersRemaining:      corev1.ConditionTrue,
	}
	testwait.For(t, 30*time.Second, "deletion conditions", func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got := 0
		for _, c := range n.Status.Conditions {
			if s, ok := want[c.Type]; ok && s == c.Status {
				got++
			}
			if c.Type == corev1.NamespaceFinalizersRemaining && c.Status == corev1.ConditionTrue &&
				!strings.Contains(c.Message, "e2e.trireme.dev/hold") {
				return false, fmt.Errorf("finalizers condition message %q does not name the finalizer", c.Message)
			}
		}
		return got == len(want) && n.Status.Phase == corev1.NamespaceTerminating, nil
	})
	testwait.For(t, 10*time.Second, "unheld content deleted", configMapGone(cs, ns, "free"))
	dropFinalizers(t, cs, ns, "held")
	testwait.For(t, 30*time.Second, "namespace removed", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
