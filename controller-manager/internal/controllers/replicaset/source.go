package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"

	"trireme.dev/controller-manager/internal/worker"
)

// Kind is the ReplicaSet kind.
var Kind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// ReplicaSets is the Source of ReplicaSets themselves.
type ReplicaSets struct {
	client   kubernetes.Interface
	informer cache.SharedIndexInformer
	lister   appslisters.ReplicaSetLister
}

// NewReplicaSets returns the source reading inf and writing through client.
func NewReplicaSets(client kubernetes.Interface, inf appsinformers.ReplicaSetInformer) *ReplicaSets {
	return &ReplicaSets{client: client, informer: inf.Informer(), lister: inf.Lister()}
}

// Kind implements Source.
func (s *ReplicaSets) Kind() schema.GroupVersionKind { return Kind }

// Informer implements Source.
func (s *ReplicaSets) Informer() cache.SharedIndexInformer { return s.informer }

// Convert implements Source.
func (s *ReplicaSets) Convert(obj any) (*appsv1.ReplicaSet, bool) {
	return worker.ObjectAs[*appsv1.ReplicaSet](obj)
}

// Get implements Source.
func (s *ReplicaSets) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	return s.lister.ReplicaSets(namespace).Get(name)
}

// List implements Source.
func (s *ReplicaSets) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	return s.lister.ReplicaSets(namespace).List(labels.Everything())
}

// GetFresh implements Source.
func (s *ReplicaSets) GetFresh(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return s.client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdateStatus implements Source.
func (s *ReplicaSets) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	return s.client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
}

// Original implements Source.
func (s *ReplicaSets) Original(rs *appsv1.ReplicaSet) runtime.Object { return rs }
