// Package tokencleaner is the controller that deletes bootstrap token
// Secrets in kube-system once their expiration has passed. Off unless
// --controllers names it, as upstream.
package tokencleaner

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "tokencleaner"

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client deletes the Secrets; the controller's own informer lists
	// through it.
	Client kubernetes.Interface
	// Resync is the informer's resync period (--min-resync-period); 0
	// means it never resyncs.
	Resync time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller deletes expired tokens. Its queue holds secret keys.
type Controller struct {
	client  kubernetes.Interface
	factory informers.SharedInformerFactory
	secrets corelisters.SecretLister
	synced  cache.InformerSynced
	loop    *worker.Loop
	now     func() time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{client: o.Client, now: o.Now}
	c.factory = informers.NewSharedInformerFactoryWithOptions(o.Client, o.Resync,
		informers.WithNamespace(metav1.NamespaceSystem),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String()
		}))
	secrets := c.factory.Core().V1().Secrets()
	c.secrets, c.synced = secrets.Lister(), secrets.Informer().HasSynced
	c.loop = worker.New(Name, c.sync)
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch secrets: %w", err)
	}
	return c, nil
}

// Run cleans until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.factory.Start(ctx.Done())
	defer c.factory.Shutdown()
	c.loop.Run(ctx, workers, c.synced)
}

// sync deletes the token if it has expired, or looks again when it will.
// A token without an expiration never expires; one whose expiration
// cannot be parsed counts as expired, as upstream.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	s, err := c.secrets.Secrets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get secret %s: %w", key, err)
	}
	if s.DeletionTimestamp != nil {
		return nil
	}
	left, expired := bootstrapsecrets.GetExpiration(s, c.now())
	if !expired {
		if left > 0 {
			c.loop.AddAfter(key, left)
		}
		return nil
	}
	err = c.client.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(s.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete expired bootstrap token %s: %w", key, err)
	}
	logr.FromContextOrDiscard(ctx).Info("Deleted expired bootstrap token", "secret", key)
	return nil
}
