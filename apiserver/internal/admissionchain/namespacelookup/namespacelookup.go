// Package namespacelookup gives admission plugins the namespaces that exist:
// from the shared informer's cache once it has synced (the plugin answers
// "not ready" until then), with a live read for a namespace the cache has
// not seen yet, so a request made moments after its namespace was created
// is not refused.
package namespacelookup

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// Namespaces is embedded by plugins that look namespaces up, in place of
// their admission.Handler: the admission initializer fills it through the
// two setters, and its readiness follows the namespace informer's sync.
type Namespaces struct {
	*admission.Handler
	client kubernetes.Interface
	lister corelisters.NamespaceLister
}

var (
	_ genericinitializer.WantsExternalKubeClientSet       = (*Namespaces)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Namespaces)(nil)
)

// New returns a lookup for a plugin that handles ops.
func New(ops ...admission.Operation) Namespaces {
	return Namespaces{Handler: admission.NewHandler(ops...)}
}

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (n *Namespaces) SetExternalKubeClientSet(c kubernetes.Interface) { n.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (n *Namespaces) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Core().V1().Namespaces()
	n.lister = inf.Lister()
	n.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (n *Namespaces) ValidateInitialization() error {
	if n.client == nil || n.lister == nil {
		return errors.New("namespace lookup needs a client and an informer factory")
	}
	return nil
}

// Cached reports whether the informer's cache holds the namespace name (or
// cannot say: an error other than not-found counts as held).
func (n *Namespaces) Cached(name string) bool {
	_, err := n.lister.Get(name)
	return err == nil || !apierrors.IsNotFound(err)
}

// Get returns the namespace name from the cache, or read live when the
// cache does not hold it. Its errors are the client's as they are, a
// missing namespace's NotFound included.
func (n *Namespaces) Get(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := n.lister.Get(name)
	if apierrors.IsNotFound(err) {
		ns, err = n.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	}
	return ns, err
}

// Exists reports whether the namespace name exists, reading it live when the
// cache does not hold it.
func (n *Namespaces) Exists(ctx context.Context, name string) (bool, error) {
	_, err := n.Get(ctx, name)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// Client is the client the initializer gave, for plugins that write
// namespaces.
func (n *Namespaces) Client() kubernetes.Interface { return n.client }
