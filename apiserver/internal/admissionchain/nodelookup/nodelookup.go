// Package nodelookup gives admission plugins the Node a pod is bound to:
// from the shared informer's cache, with a live read for a node the cache
// has not seen yet, so a pod bound moments after its node registered is
// judged against the real node rather than refused or waved through.
package nodelookup

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// Nodes is embedded by plugins that read Nodes; the admission initializer
// fills it through the two setters.
type Nodes struct {
	client kubernetes.Interface
	lister corelisters.NodeLister
}

var (
	_ genericinitializer.WantsExternalKubeClientSet       = (*Nodes)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Nodes)(nil)
)

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (n *Nodes) SetExternalKubeClientSet(c kubernetes.Interface) { n.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (n *Nodes) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	n.lister = f.Core().V1().Nodes().Lister()
}

// ValidateInitialization implements admission.InitializationValidator.
func (n *Nodes) ValidateInitialization() error {
	if n.client == nil || n.lister == nil {
		return errors.New("node lookup needs a client and an informer factory")
	}
	return nil
}

// Get returns the named Node, or nil and no error when there is none.
func (n *Nodes) Get(ctx context.Context, name string) (*corev1.Node, error) {
	node, err := n.lister.Get(name)
	if apierrors.IsNotFound(err) {
		node, err = n.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	return node, nil
}
