package replicationcontroller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/fakecluster"
)

func rc() *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns", UID: "rc-uid"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To(int32(2)),
			Selector: map[string]string{"app": "old"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "old"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
		Status: corev1.ReplicationControllerStatus{Replicas: 1, ReadyReplicas: 1, Conditions: []corev1.ReplicationControllerCondition{
			{Type: corev1.ReplicationControllerReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"},
		}},
	}
}

func TestConversionRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rc   *corev1.ReplicationController
	}{
		{"full", rc()},
		{"no template", func() *corev1.ReplicationController { r := rc(); r.Spec.Template = nil; return r }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromReplicaSet(ToReplicaSet(tt.rc))
			want := tt.rc.DeepCopy()
			if want.Spec.Template == nil {
				want.Spec.Template = &corev1.PodTemplateSpec{}
			}
			if !apiequality.Semantic.DeepEqual(got, want) {
				t.Errorf("round trip = %+v, want %+v", got, want)
			}
		})
	}
}

func TestSyncCreatesPodsOwnedByTheReplicationController(t *testing.T) {
	cs := fakecluster.Client(rc())
	f := informers.NewSharedInformerFactory(cs, 0)
	c, err := New(Options{Client: cs, ReplicationControllers: f.Core().V1().ReplicationControllers(), Pods: f.Core().V1().Pods(), Recorder: record.NewFakeRecorder(10)})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	c.Run(cancelled(), 0) // returns at once; the loop is exercised in the replicaset tests
	src := &source{client: cs, informer: f.Core().V1().ReplicationControllers().Informer(), lister: f.Core().V1().ReplicationControllers().Lister()}
	rs, err := src.Get("ns", "old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.UpdateStatus(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if src.Kind().Kind != "ReplicationController" {
		t.Errorf("kind = %v", src.Kind())
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
