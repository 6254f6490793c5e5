package authn

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// liveObjects looks objects up in the informer caches and, on a miss, asks
// the server: a token issued for a service account or pod created a moment
// ago must work before the watch has delivered it.
type liveObjects struct {
	client  kubernetes.Interface
	sas     corev1listers.ServiceAccountLister
	pods    corev1listers.PodLister
	secrets corev1listers.SecretLister
	nodes   corev1listers.NodeLister
}

func newLiveObjects(client kubernetes.Interface, factory informers.SharedInformerFactory) *liveObjects {
	core := factory.Core().V1()
	return &liveObjects{
		client:  client,
		sas:     core.ServiceAccounts().Lister(),
		pods:    core.Pods().Lister(),
		secrets: core.Secrets().Lister(),
		nodes:   core.Nodes().Lister(),
	}
}

// ServiceAccount implements satoken.Objects.
func (l *liveObjects) ServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	o, err := l.sas.ServiceAccounts(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return l.client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return o, err
}

// Pod implements satoken.Objects.
func (l *liveObjects) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	o, err := l.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return l.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return o, err
}

// Secret implements satoken.Objects.
func (l *liveObjects) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	o, err := l.secrets.Secrets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return l.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return o, err
}

// Node implements satoken.Objects.
func (l *liveObjects) Node(ctx context.Context, name string) (*corev1.Node, error) {
	o, err := l.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return l.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	return o, err
}
