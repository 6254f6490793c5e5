package registry

import (
	"errors"

	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func deployment(replicas int32, gen int64) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Generation: gen},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		},
		Status: appsv1.DeploymentStatus{Replicas: 2},
	}
}

func TestBumpGenerationOnSpecChange(t *testing.T) {
	tests := []struct {
		name    string
		obj     *appsv1.Deployment
		wantGen int64
	}{
		{"spec change bumps", deployment(5, 3), 4},
		{"no spec change keeps", deployment(3, 3), 3},
		{"client cannot set generation", deployment(3, 99), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bumpGenerationOnSpecChange(tt.obj, deployment(3, 3))
			if tt.obj.Generation != tt.wantGen {
				t.Errorf("generation = %d, want %d", tt.obj.Generation, tt.wantGen)
			}
		})
	}
}

func TestFieldHelpers(t *testing.T) {
	d := deployment(3, 1)
	clearField(d, "Status")
	if d.Status.Replicas != 0 {
		t.Error("clearField left status")
	}
	copyField(d, deployment(7, 1), "Spec")
	if *d.Spec.Replicas != 7 {
		t.Error("copyField did not copy spec")
	}
	// Kinds without the field are left alone rather than panicking.
	cm := &corev1.ConfigMap{Data: map[string]string{"a": "b"}}
	clearField(cm, "Status")
	copyField(cm, &corev1.ConfigMap{}, "Spec")
	if cm.Data["a"] != "b" {
		t.Error("helpers changed a kind without the field")
	}
}

func TestScaleOf(t *testing.T) {
	tests := []struct {
		name         string
		obj          runtime.Object
		wantReplicas int32
		wantSelector string
	}{
		{"deployment", deployment(3, 1), 3, "app=d"},
		{"replication controller", &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "rc"},
			Spec:       corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2), Selector: map[string]string{"x": "y"}},
		}, 2, "x=y"},
		{"nil replicas read as one", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"}}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scaleOf(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Spec.Replicas != tt.wantReplicas || sc.Status.Selector != tt.wantSelector || sc.Name == "" {
				t.Errorf("scale = %+v", sc)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	if err := tooLarge(errors.New("rpc error: code = InvalidArgument desc = etcdserver: request is too large")); !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("etcd size error became %v, want 413", err)
	}
	other := errors.New("boom")
	if err := tooLarge(other); err != other {
		t.Errorf("other errors must pass through, got %v", err)
	}
	if tooLarge(nil) != nil {
		t.Error("nil must stay nil")
	}
}
