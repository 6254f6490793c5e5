package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// newPod creates a pod from samplePod with the given labels and node.
func newPod(t *testing.T, ns, node string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p := samplePod(ns).(*corev1.Pod)
	p.Name = uniqueName("pod")
	p.Labels = labels
	p.Spec.NodeName = node
	created, err := client.CoreV1().Pods(ns).Create(testContext(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return created
}

// setPhase writes the pod's phase through the status subresource, as the
// kubelet does.
func setPhase(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	pod = pod.DeepCopy()
	pod.Status.Phase = phase
	out, err := client.CoreV1().Pods(pod.Namespace).UpdateStatus(testContext(t), pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("set pod phase %s: %v", phase, err)
	}
	return out
}

func TestPods(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	pods := client.CoreV1().Pods(ns)

	t.Run("create sets pending status and qos class", func(t *testing.T) {
		p := newPod(t, ns, "", nil)
		if p.Status.Phase != corev1.PodPending || p.Status.QOSClass != corev1.PodQOSBestEffort {
			t.Errorf("new pod status phase %q qos %q, want Pending and BestEffort", p.Status.Phase, p.Status.QOSClass)
		}
	})

	t.Run("binding sets nodeName once", func(t *testing.T) {
		p := newPod(t, ns, "", nil)
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-a"},
		}
		if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("bind: %v", err)
		}
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.NodeName != "node-a" {
			t.Errorf("nodeName after binding = %q, want node-a", got.Spec.NodeName)
		}
		scheduled := false
		for _, c := range got.Status.Conditions {
			scheduled = scheduled || c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue
		}
		if !scheduled {
			t.Errorf("conditions after binding = %+v, want PodScheduled True", got.Status.Conditions)
		}
		binding.Target.Name = "node-b"
		wantStatus(t, pods.Bind(ctx, binding, metav1.CreateOptions{}), 409)
	})

	t.Run("dry-run binding changes nothing", func(t *testing.T) {
		p := newPod(t, ns, "", nil)
		err := pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-a"},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.NodeName != "" {
			t.Errorf("dry-run binding set nodeName %q", got.Spec.NodeName)
		}
	})

	t.Run("ephemeral containers are added through their subresource", func(t *testing.T) {
		p := newPod(t, ns, "node-a", nil)
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debugger", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent,
		}}}
		out, err := pods.UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Spec.EphemeralContainers) != 1 || out.Spec.EphemeralContainers[0].Name != "debugger" {
			t.Errorf("ephemeral containers = %+v, want debugger", out.Spec.EphemeralContainers)
		}
		if out.Generation != p.Generation+1 {
			t.Errorf("generation after adding an ephemeral container = %d, want %d", out.Generation, p.Generation+1)
		}
		// The main resource cannot add them: upstream's pod update
		// validation refuses the change (needs api/validation).
		out.Spec.EphemeralContainers = append(out.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "second", Image: "busybox"}})
		updated, err := pods.Update(ctx, out, metav1.UpdateOptions{})
		if err == nil && len(updated.Spec.EphemeralContainers) != 1 {
			t.Errorf("main update changed ephemeral containers to %d", len(updated.Spec.EphemeralContainers))
		}
	})

	t.Run("resize changes resources but not the QoS class", func(t *testing.T) {
		p := samplePod(ns).(*corev1.Pod)
		p.Name, p.Spec.NodeName = uniqueName("pod"), "node-a"
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		p, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.QOSClass != corev1.PodQOSBurstable {
			t.Fatalf("qos class = %s, want Burstable", p.Status.QOSClass)
		}
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		out, err := pods.UpdateResize(ctx, p.Name, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; got.String() != "200m" {
			t.Errorf("cpu request after resize = %s, want 200m", got.String())
		}
		if p.Generation != 1 || out.Generation != 2 {
			t.Errorf("generation at create %d, after resize %d; want 1 and 2", p.Generation, out.Generation)
		}
		out.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		_, err = pods.UpdateResize(ctx, p.Name, out, metav1.UpdateOptions{})
		wantStatus(t, err, 422)
	})

	t.Run("binding a missing pod is not found", func(t *testing.T) {
		err := pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: "no-such-pod", Namespace: ns},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-a"},
		}, metav1.CreateOptions{})
		wantStatus(t, err, 404)
	})

	t.Run("nodeName cannot change by update", func(t *testing.T) {
		p := newPod(t, ns, "node-a", nil)
		p.Spec.NodeName = "node-b"
		_, err := pods.Update(ctx, p, metav1.UpdateOptions{})
		wantStatus(t, err, 422) // needs api/validation
	})

	t.Run("status update writes phase, main update does not", func(t *testing.T) {
		p := newPod(t, ns, "node-a", nil)
		running := setPhase(t, p, corev1.PodRunning)
		if running.Status.Phase != corev1.PodRunning {
			t.Fatalf("phase after status update = %q", running.Status.Phase)
		}
		running.Status.Phase = corev1.PodFailed
		running.Labels = map[string]string{"touched": "yes"}
		out, err := pods.Update(ctx, running, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status.Phase != corev1.PodRunning {
			t.Errorf("main update changed phase to %q", out.Status.Phase)
		}
	})

	t.Run("field selectors spec.nodeName and status.phase", func(t *testing.T) {
		sel := map[string]string{"selected": uniqueName("sel")}
		onA := newPod(t, ns, "node-sel-a", sel)
		pending := newPod(t, ns, "", sel)
		running := setPhase(t, newPod(t, ns, "node-sel-b", sel), corev1.PodRunning)
		for _, tc := range []struct {
			selector string
			want     []string
		}{
			{"spec.nodeName=node-sel-a", []string{onA.Name}},
			{"spec.nodeName=", []string{pending.Name}},
			{"spec.nodeName!=", []string{onA.Name, running.Name}},
			{"status.phase=Running", []string{running.Name}},
			{"status.phase=Pending,spec.nodeName=node-sel-a", []string{onA.Name}},
			{"spec.host=node-sel-a", []string{onA.Name}},
		} {
			list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "selected=" + sel["selected"], FieldSelector: tc.selector})
			if err != nil {
				t.Fatalf("list %s: %v", tc.selector, err)
			}
			var got []string
			for _, p := range list.Items {
				got = append(got, p.Name)
			}
			if !sameSet(got, tc.want) {
				t.Errorf("field selector %s listed %v, want %v", tc.selector, got, tc.want)
			}
		}
	})

	t.Run("graceful deletion of a scheduled pod", func(t *testing.T) {
		p := newPod(t, ns, "node-a", nil)
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("scheduled pod gone at once, want it kept for its kubelet: %v", err)
		}
		if got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 30 {
			t.Errorf("deletionTimestamp %v gracePeriod %v, want set and 30", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
		}
		// The kubelet confirms with a zero grace period.
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		_, err = pods.Get(ctx, p.Name, metav1.GetOptions{})
		wantStatus(t, err, 404)
	})

	t.Run("graceful deletion uses terminationGracePeriodSeconds", func(t *testing.T) {
		p := samplePod(ns).(*corev1.Pod)
		p.Name, p.Spec.NodeName = uniqueName("pod"), "node-a"
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](7)
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 7 {
			t.Errorf("deletionGracePeriodSeconds = %v, want 7", got.DeletionGracePeriodSeconds)
		}
	})

	t.Run("unscheduled pod is deleted at once", func(t *testing.T) {
		p := newPod(t, ns, "", nil)
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		wantStatus(t, err, 404)
	})
}

func TestPodEviction(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	pods := client.CoreV1().Pods(ns)
	evict := func(name string) error {
		return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	}

	t.Run("without a budget the pod is deleted", func(t *testing.T) {
		p := setPhase(t, newPod(t, ns, "", map[string]string{"app": "free"}), corev1.PodRunning)
		if err := evict(p.Name); err != nil {
			t.Fatalf("evict: %v", err)
		}
		_, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		wantStatus(t, err, 404)
	})

	t.Run("a budget allowing no disruption refuses with 429", func(t *testing.T) {
		labels := map[string]string{"app": "guarded"}
		p := setPhase(t, newPod(t, ns, "", labels), corev1.PodRunning)
		pdbs := client.PolicyV1().PodDisruptionBudgets(ns)
		pdb, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "guard"},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The disruption controller's verdict, written by hand.
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
		if pdb, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, evict(p.Name), 429)
		if _, err := pods.Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
			t.Fatalf("pod gone after a refused eviction: %v", err)
		}

		pdb.Status.DisruptionsAllowed = 1
		if _, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := evict(p.Name); err != nil {
			t.Fatalf("evict with a disruption allowed: %v", err)
		}
		_, err = pods.Get(ctx, p.Name, metav1.GetOptions{})
		wantStatus(t, err, 404)
		after, err := pdbs.Get(ctx, "guard", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := after.Status.DisruptedPods[p.Name]; !ok || after.Status.DisruptionsAllowed != 0 {
			t.Errorf("budget after eviction: disruptionsAllowed %d disruptedPods %v, want 0 and the pod", after.Status.DisruptionsAllowed, after.Status.DisruptedPods)
		}
	})

	t.Run("dry-run eviction changes nothing", func(t *testing.T) {
		labels := map[string]string{"app": "dry"}
		p := setPhase(t, newPod(t, ns, "", labels), corev1.PodRunning)
		pdbs := client.PolicyV1().PodDisruptionBudgets(ns)
		pdb, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "dry"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 1, CurrentHealthy: 1, ExpectedPods: 1}
		if _, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		err = pods.EvictV1(ctx, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: ns},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("pod gone after a dry-run eviction: %v", err)
		}
		after, err := pdbs.Get(ctx, "dry", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.Status.DisruptionsAllowed != 1 {
			t.Errorf("dry-run eviction spent the budget: disruptionsAllowed %d", after.Status.DisruptionsAllowed)
		}
	})

	t.Run("an evicted pod is marked DisruptionTarget before it goes", func(t *testing.T) {
		// A finalizer, as a Job's pods carry, keeps the deleted pod to look at.
		p := newPod(t, ns, "", map[string]string{"app": "held"})
		p.Finalizers = []string{"example.com/hold"}
		p, err := pods.Update(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = pods.Patch(context.Background(), p.Name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
		})
		setPhase(t, p, corev1.PodRunning)
		if err := evict(p.Name); err != nil {
			t.Fatalf("evict: %v", err)
		}
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var cond *corev1.PodCondition
		for i := range got.Status.Conditions {
			if got.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &got.Status.Conditions[i]
			}
		}
		if got.DeletionTimestamp == nil || cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "EvictionByEvictionAPI" {
			t.Errorf("after eviction: deletionTimestamp %v, DisruptionTarget %+v; want deleted with EvictionByEvictionAPI", got.DeletionTimestamp, cond)
		}
	})

	t.Run("evicting a missing pod is not found", func(t *testing.T) {
		wantStatus(t, evict("no-such-pod"), 404)
	})
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
