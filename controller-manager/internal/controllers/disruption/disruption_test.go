package disruption

import (
	"context"
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func pod(name string, ready bool, owner *metav1.OwnerReference) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "a"}},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func controllerRef(kind, apiVersion, name, uid string) *metav1.OwnerReference {
	t := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &t}
}

func pdb(minAvailable, maxUnavailable *intstr.IntOrString, disrupted map[string]metav1.Time) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "budget", Namespace: "ns", Generation: 3},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptedPods: disrupted},
	}
}

func ptrIntStr(v intstr.IntOrString) *intstr.IntOrString { return &v }

func TestCompute(t *testing.T) {
	three := int32(3)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{*controllerRef("Deployment", "apps/v1", "dep", "dep-uid")}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &three}}
	four := int32(4)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "dep", Namespace: "ns", UID: "dep-uid"}, Spec: appsv1.DeploymentSpec{Replicas: &four}}
	byRS := controllerRef("ReplicaSet", "apps/v1", "rs", "rs-uid")
	widget := controllerRef("Widget", "example.com/v1", "w", "w-uid")
	tests := []struct {
		name                                string
		objs                                []runtime.Object
		budget                              *policyv1.PodDisruptionBudget
		healthy, desired, expected, allowed int32
		condition                           metav1.ConditionStatus
		reason                              string
		wantDisrupted                       int
		scales                              ScaleReader
	}{
		{"minAvailable integer", []runtime.Object{pod("a", true, nil), pod("b", true, nil), pod("c", false, nil)},
			pdb(ptrIntStr(intstr.FromInt32(1)), nil, nil), 2, 1, 3, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason, 0, nil},
		{"minAvailable equal to healthy allows nothing", []runtime.Object{pod("a", true, nil), pod("b", true, nil)},
			pdb(ptrIntStr(intstr.FromInt32(2)), nil, nil), 2, 2, 2, 0, metav1.ConditionFalse, policyv1.InsufficientPodsReason, 0, nil},
		{"maxUnavailable against the deployment's scale", []runtime.Object{rs, dep, pod("a", true, byRS), pod("b", true, byRS), pod("c", true, byRS), pod("d", true, byRS)},
			pdb(nil, ptrIntStr(intstr.FromInt32(1)), nil), 4, 3, 4, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason, 0, nil},
		{"minAvailable percentage rounds up", []runtime.Object{rs, dep, pod("a", true, byRS), pod("b", true, byRS), pod("c", true, byRS)},
			pdb(ptrIntStr(intstr.FromString("50%")), nil, nil), 3, 2, 4, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason, 0, nil},
		{"recently disrupted pod does not count as healthy", []runtime.Object{pod("a", true, nil), pod("b", true, nil)},
			pdb(ptrIntStr(intstr.FromInt32(1)), nil, map[string]metav1.Time{"a": metav1.NewTime(now.Add(-time.Minute))}), 1, 1, 2, 0, metav1.ConditionFalse, policyv1.InsufficientPodsReason, 1, nil},
		{"expired disruption is forgotten", []runtime.Object{pod("a", true, nil), pod("b", true, nil)},
			pdb(ptrIntStr(intstr.FromInt32(1)), nil, map[string]metav1.Time{"a": metav1.NewTime(now.Add(-3 * time.Minute))}), 2, 1, 2, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason, 0, nil},
		{"unknown controller fails safe", []runtime.Object{pod("a", true, controllerRef("Widget", "example.com/v1", "w", "w-uid"))},
			pdb(nil, ptrIntStr(intstr.FromInt32(1)), nil), 0, 0, 0, 0, metav1.ConditionFalse, policyv1.SyncFailedReason, 0, nil},
		{"custom controller's scale subresource", []runtime.Object{pod("a", true, widget), pod("b", true, widget)},
			pdb(nil, ptrIntStr(intstr.FromInt32(1)), nil), 2, 4, 5, 0, metav1.ConditionFalse, policyv1.InsufficientPodsReason, 0,
			fakeScales{"w": {uid: "w-uid", replicas: 5}}},
		{"custom controller replaced by another of its name fails safe", []runtime.Object{pod("a", true, widget)},
			pdb(nil, ptrIntStr(intstr.FromInt32(1)), nil), 0, 0, 0, 0, metav1.ConditionFalse, policyv1.SyncFailedReason, 0,
			fakeScales{"w": {uid: "other-uid", replicas: 5}}},
		{"kind without a scale subresource fails safe", []runtime.Object{pod("a", true, widget)},
			pdb(nil, ptrIntStr(intstr.FromInt32(1)), nil), 0, 0, 0, 0, metav1.ConditionFalse, policyv1.SyncFailedReason, 0,
			fakeScales{"w": {err: errors.New("widgets.example.com does not implement the scale subresource")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			client := fake.NewClientset(append(tt.objs, tt.budget)...)
			f := informers.NewSharedInformerFactory(client, 0)
			rec := record.NewFakeRecorder(10)
			c, err := New(Options{
				Client: client,
				PDBs:   f.Policy().V1().PodDisruptionBudgets(), Pods: f.Core().V1().Pods(), RCs: f.Core().V1().ReplicationControllers(),
				ReplicaSets: f.Apps().V1().ReplicaSets(), Deployments: f.Apps().V1().Deployments(), StatefulSets: f.Apps().V1().StatefulSets(),
				Scales: tt.scales, Recorder: rec, Now: func() time.Time { return now },
			})
			if err != nil {
				t.Fatal(err)
			}
			f.Start(ctx.Done())
			f.WaitForCacheSync(ctx.Done())
			defer f.Shutdown()
			defer cancel()
			if err := c.sync(ctx, "ns/budget"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, err := client.PolicyV1().PodDisruptionBudgets("ns").Get(ctx, "budget", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := got.Status
			if tt.reason != policyv1.SyncFailedReason {
				if st.CurrentHealthy != tt.healthy || st.DesiredHealthy != tt.desired || st.ExpectedPods != tt.expected {
					t.Errorf("healthy %d desired %d expected %d; want %d %d %d", st.CurrentHealthy, st.DesiredHealthy, st.ExpectedPods, tt.healthy, tt.desired, tt.expected)
				}
			}
			if st.DisruptionsAllowed != tt.allowed || st.ObservedGeneration != 3 || len(st.DisruptedPods) != tt.wantDisrupted {
				t.Errorf("allowed %d observedGeneration %d disrupted %v; want %d, 3, %d", st.DisruptionsAllowed, st.ObservedGeneration, st.DisruptedPods, tt.allowed, tt.wantDisrupted)
			}
			cond := apimeta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
			if cond == nil || cond.Status != tt.condition || cond.Reason != tt.reason {
				t.Errorf("condition %+v, want %s %s", cond, tt.condition, tt.reason)
			}
			if tt.reason == policyv1.SyncFailedReason {
				select {
				case e := <-rec.Events:
					if e == "" || e[:7] != "Warning" {
						t.Errorf("event %q, want a Warning", e)
					}
				default:
					t.Error("no Warning event for a budget that cannot be computed")
				}
			}
		})
	}
}

type fakeScale struct {
	uid      string
	replicas int32
	err      error
}

// fakeScales serves the scale of owners by name.
type fakeScales map[string]fakeScale

func (f fakeScales) Scale(_ context.Context, _ string, ref *metav1.OwnerReference) (string, int32, error) {
	s, ok := f[ref.Name]
	if !ok {
		return "", 0, errors.New("not found")
	}
	return s.uid, s.replicas, s.err
}
