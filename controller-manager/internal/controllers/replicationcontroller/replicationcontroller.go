// Package replicationcontroller keeps ReplicationControllers by running the
// replicaset controller over them: each is converted to the ReplicaSet it is
// equivalent to, and status is written back to the ReplicationController.
package replicationcontroller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/controllers/replicaset"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "replicationcontroller"

// Kind is the ReplicationController kind.
var Kind = corev1.SchemeGroupVersion.WithKind("ReplicationController")

// Options configure the controller; every field is required.
type Options struct {
	// Client creates, deletes and patches pods and writes
	// ReplicationController status.
	Client kubernetes.Interface
	// ReplicationControllers and Pods are the shared informers; New
	// registers its handlers on both.
	ReplicationControllers coreinformers.ReplicationControllerInformer
	Pods                   coreinformers.PodInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
}

// New returns the replicaset controller running over ReplicationControllers.
func New(o Options) (*replicaset.Controller, error) {
	rcs := o.ReplicationControllers
	return replicaset.New(replicaset.Options{
		Name:     Name,
		Client:   o.Client,
		Source:   &source{client: o.Client, informer: rcs.Informer(), lister: rcs.Lister()},
		Pods:     o.Pods,
		Recorder: o.Recorder,
	})
}

type source struct {
	client   kubernetes.Interface
	informer cache.SharedIndexInformer
	lister   corelisters.ReplicationControllerLister
}

func (s *source) Kind() schema.GroupVersionKind       { return Kind }
func (s *source) Informer() cache.SharedIndexInformer { return s.informer }

func (s *source) Convert(obj any) (*appsv1.ReplicaSet, bool) {
	rc, ok := worker.ObjectAs[*corev1.ReplicationController](obj)
	if !ok {
		return nil, false
	}
	return ToReplicaSet(rc), true
}

func (s *source) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	rc, err := s.lister.ReplicationControllers(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	return ToReplicaSet(rc), nil
}

func (s *source) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	rcs, err := s.lister.ReplicationControllers(namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ReplicaSet, len(rcs))
	for i, rc := range rcs {
		out[i] = ToReplicaSet(rc)
	}
	return out, nil
}

func (s *source) GetFresh(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	rc, err := s.client.CoreV1().ReplicationControllers(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return ToReplicaSet(rc), nil
}

func (s *source) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	rc, err := s.client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, FromReplicaSet(rs), metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return ToReplicaSet(rc), nil
}

func (s *source) Original(rs *appsv1.ReplicaSet) runtime.Object { return FromReplicaSet(rs) }

// ToReplicaSet returns the ReplicaSet equivalent to rc.
func ToReplicaSet(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: *rc.ObjectMeta.DeepCopy()}
	rs.Spec.Replicas = rc.Spec.Replicas
	rs.Spec.MinReadySeconds = rc.Spec.MinReadySeconds
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template.DeepCopy()
	}
	rs.Status = appsv1.ReplicaSetStatus{
		Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
		ReadyReplicas: rc.Status.ReadyReplicas, AvailableReplicas: rc.Status.AvailableReplicas,
		ObservedGeneration: rc.Status.ObservedGeneration,
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return rs
}

// FromReplicaSet returns the ReplicationController rs stands for.
func FromReplicaSet(rs *appsv1.ReplicaSet) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{ObjectMeta: *rs.ObjectMeta.DeepCopy()}
	rc.Spec.Replicas = rs.Spec.Replicas
	rc.Spec.MinReadySeconds = rs.Spec.MinReadySeconds
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	rc.Spec.Template = rs.Spec.Template.DeepCopy()
	rc.Status = corev1.ReplicationControllerStatus{
		Replicas: rs.Status.Replicas, FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
		ReadyReplicas: rs.Status.ReadyReplicas, AvailableReplicas: rs.Status.AvailableReplicas,
		ObservedGeneration: rs.Status.ObservedGeneration,
	}
	for _, c := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return rc
}
