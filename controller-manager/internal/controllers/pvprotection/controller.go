// Package pvprotection is the controller behind the
// kubernetes.io/pv-protection finalizer: it adds the finalizer to every
// PersistentVolume and removes it from a deleted one once no claim is bound
// to it, so a volume in use is never removed under its claim.
package pvprotection

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "pv-protection"

// Finalizer keeps a PersistentVolume while it is bound.
const Finalizer = "kubernetes.io/pv-protection"

// Options configure the controller; every field is required.
type Options struct {
	// Client adds and removes the finalizer.
	Client kubernetes.Interface
	// Volumes is the shared PersistentVolume informer; New registers its
	// handlers.
	Volumes coreinformers.PersistentVolumeInformer
}

// Controller manages the finalizer. Its queue holds volume names.
type Controller struct {
	client  kubernetes.Interface
	volumes corelisters.PersistentVolumeLister
	synced  cache.InformerSynced
	loop    *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{client: o.Client, volumes: o.Volumes.Lister(), synced: o.Volumes.Informer().HasSynced}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch persistentvolumes: %w", err)
	}
	return c, nil
}

// Run works with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced)
}

// InUse reports whether a volume must keep its finalizer: while it is
// Bound, as upstream decides.
func InUse(pv *corev1.PersistentVolume) bool {
	return pv.Status.Phase == corev1.VolumeBound
}

func (c *Controller) sync(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get volume %s: %w", name, err)
	}
	has := slices.Contains(pv.Finalizers, Finalizer)
	switch {
	case pv.DeletionTimestamp == nil && !has:
		pv = pv.DeepCopy()
		pv.Finalizers = append(pv.Finalizers, Finalizer)
	case pv.DeletionTimestamp != nil && has && !InUse(pv):
		pv = pv.DeepCopy()
		pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == Finalizer })
		logr.FromContextOrDiscard(ctx).V(2).Info("Removing finalizer of unused volume", "volume", name)
	default:
		return nil
	}
	if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update finalizers of volume %s: %w", name, err)
	}
	return nil
}
