// Package persistentvolume is the persistentvolume-binder controller: it
// binds PersistentVolumeClaims to statically provisioned PersistentVolumes
// (by class, size, access modes, volume mode and selector; a volume
// pre-bound to a claim first), waits for a consumer under a
// WaitForFirstConsumer StorageClass until the scheduler names a node in
// the volume.kubernetes.io/selected-node annotation, keeps both objects'
// phases, and applies a released volume's reclaim policy.
package persistentvolume

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "persistentvolume-binder"

// DefaultSyncPeriod is upstream's --pvclaimbinder-sync-period.
const DefaultSyncPeriod = 15 * time.Second

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes claims and volumes.
	Client kubernetes.Interface
	// Claims, Volumes, Classes and Nodes are the shared informers; New
	// registers its handlers on Claims and Volumes.
	Claims  coreinformers.PersistentVolumeClaimInformer
	Volumes coreinformers.PersistentVolumeInformer
	Classes storageinformers.StorageClassInformer
	Nodes   coreinformers.NodeInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// SyncPeriod is how often every claim and volume is looked at again
	// (--pvclaimbinder-sync-period); 0 means DefaultSyncPeriod (15s).
	SyncPeriod time.Duration
}

// Controller binds claims to volumes. It has a queue of claim keys and one
// of volume names, each worked by one goroutine so that two claims never
// race for the same volume.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	claims   corelisters.PersistentVolumeClaimLister
	volumes  corelisters.PersistentVolumeLister
	classes  storagelisters.StorageClassLister
	nodes    corelisters.NodeLister
	synced   []cache.InformerSynced
	claimQ   *worker.Loop
	volumeQ  *worker.Loop
	resync   time.Duration
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder, resync: o.SyncPeriod,
		claims:  o.Claims.Lister(),
		volumes: o.Volumes.Lister(),
		classes: o.Classes.Lister(),
		nodes:   o.Nodes.Lister(),
		synced: []cache.InformerSynced{o.Claims.Informer().HasSynced, o.Volumes.Informer().HasSynced,
			o.Classes.Informer().HasSynced, o.Nodes.Informer().HasSynced},
	}
	c.claimQ = worker.New(Name+"-claims", c.syncClaim)
	c.volumeQ = worker.New(Name+"-volumes", c.syncVolume)
	if _, err := o.Claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimQ.AddObject,
		UpdateFunc: func(_, obj any) { c.claimQ.AddObject(obj) },
		DeleteFunc: c.claimDeleted,
	}); err != nil {
		return nil, fmt.Errorf("watch persistentvolumeclaims: %w", err)
	}
	if _, err := o.Volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.volumeChanged,
		UpdateFunc: func(_, obj any) { c.volumeChanged(obj) },
		DeleteFunc: c.volumeChanged,
	}); err != nil {
		return nil, fmt.Errorf("watch persistentvolumes: %w", err)
	}
	return c, nil
}

// Run binds until ctx ends; workers is ignored (one per queue, see
// Controller).
func (c *Controller) Run(ctx context.Context, _ int) {
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced...) {
		return
	}
	go c.claimQ.Run(ctx, 1)
	go wait.UntilWithContext(ctx, c.resyncAll, c.resync)
	c.volumeQ.Run(ctx, 1)
}

// resyncAll queues every claim and volume, each resync period: a volume
// freed or created may now suit a claim that found none.
func (c *Controller) resyncAll(context.Context) {
	claims, _ := c.claims.List(labels.Everything())
	for _, pvc := range claims {
		c.claimQ.AddObject(pvc)
	}
	volumes, _ := c.volumes.List(labels.Everything())
	for _, pv := range volumes {
		c.volumeQ.AddObject(pv)
	}
}

// claimDeleted releases the claim's volume: the one it names, and any whose
// claimRef names it. A claim deleted while its binding was half done (the
// volume's claimRef written, the claim's volumeName not yet) names none.
func (c *Controller) claimDeleted(obj any) {
	pvc, ok := worker.ObjectAs[*corev1.PersistentVolumeClaim](obj)
	if !ok {
		return
	}
	if pvc.Spec.VolumeName != "" {
		c.volumeQ.Add(pvc.Spec.VolumeName)
	}
	volumes, _ := c.volumes.List(labels.Everything())
	for _, pv := range volumes {
		if ref := pv.Spec.ClaimRef; ref != nil && ref.UID == pvc.UID && pv.Name != pvc.Spec.VolumeName {
			c.volumeQ.Add(pv.Name)
		}
	}
}

// volumeChanged syncs the volume and the claim it names.
func (c *Controller) volumeChanged(obj any) {
	pv, ok := worker.ObjectAs[*corev1.PersistentVolume](obj)
	if !ok {
		return
	}
	c.volumeQ.Add(pv.Name)
	if ref := pv.Spec.ClaimRef; ref != nil {
		c.claimQ.Add(ref.Namespace + "/" + ref.Name)
	}
}
