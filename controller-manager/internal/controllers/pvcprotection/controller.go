// Package pvcprotection is the controller behind the
// kubernetes.io/pvc-protection finalizer: it adds the finalizer to every
// PersistentVolumeClaim and removes it from a deleted one once no pod that
// has not terminated uses it, so a claim is never removed under a pod.
package pvcprotection

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
	"k8s.io/component-helpers/storage/ephemeral"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "pvc-protection"

// Finalizer keeps a claim while a pod uses it.
const Finalizer = "kubernetes.io/pvc-protection"

// podsByClaim indexes pods by the namespace/name of each claim they use.
const podsByClaim = "pvcprotection/claim"

// Options configure the controller; every field is required.
type Options struct {
	// Client adds and removes the finalizer.
	Client kubernetes.Interface
	// Claims and Pods are the shared informers; New registers its handlers
	// on both and indexes pods by the claims they use.
	Claims coreinformers.PersistentVolumeClaimInformer
	Pods   coreinformers.PodInformer
}

// Controller manages the finalizer. Its queue holds claim keys.
type Controller struct {
	client kubernetes.Interface
	claims corelisters.PersistentVolumeClaimLister
	pods   cache.Indexer
	synced []cache.InformerSynced
	loop   *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{
		client: o.Client,
		claims: o.Claims.Lister(),
		pods:   o.Pods.Informer().GetIndexer(),
		synced: []cache.InformerSynced{o.Claims.Informer().HasSynced, o.Pods.Informer().HasSynced},
	}
	c.loop = worker.New(Name, c.sync)
	if err := o.Pods.Informer().AddIndexers(cache.Indexers{podsByClaim: func(obj any) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil
		}
		return ClaimKeys(pod), nil
	}}); err != nil {
		return nil, fmt.Errorf("index pods by claim: %w", err)
	}
	if _, err := o.Claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch persistentvolumeclaims: %w", err)
	}
	// A pod that stops or goes may free the claims it used.
	requeue := func(obj any) {
		pod, ok := worker.ObjectAs[*corev1.Pod](obj)
		if !ok {
			return
		}
		for _, key := range ClaimKeys(pod) {
			c.loop.Add(key)
		}
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { requeue(obj) },
		DeleteFunc: requeue,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	return c, nil
}

// Run works with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

// ClaimKeys are the namespace/name keys of the claims pod uses, ephemeral
// volumes' claims included.
func ClaimKeys(pod *corev1.Pod) []string {
	var keys []string
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			keys = append(keys, pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			keys = append(keys, pod.Namespace+"/"+ephemeral.VolumeClaimName(pod, v))
		}
	}
	return keys
}

// terminated pods no longer hold their volumes.
func terminated(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get claim %s: %w", key, err)
	}
	has := slices.Contains(claim.Finalizers, Finalizer)
	switch {
	case claim.DeletionTimestamp == nil && !has:
		claim = claim.DeepCopy()
		claim.Finalizers = append(claim.Finalizers, Finalizer)
	case claim.DeletionTimestamp != nil && has:
		used, err := c.inUse(ctx, claim)
		if err != nil || used {
			return err
		}
		claim = claim.DeepCopy()
		claim.Finalizers = slices.DeleteFunc(claim.Finalizers, func(f string) bool { return f == Finalizer })
		logr.FromContextOrDiscard(ctx).V(2).Info("Removing finalizer of unused claim", "claim", key)
	default:
		return nil
	}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, claim, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update finalizers of claim %s: %w", key, err)
	}
	return nil
}

// inUse asks the cache, then, before letting the claim go, the apiserver:
// a pod created a moment ago may not be in the cache yet.
func (c *Controller) inUse(ctx context.Context, claim *corev1.PersistentVolumeClaim) (bool, error) {
	key := claim.Namespace + "/" + claim.Name
	objs, err := c.pods.ByIndex(podsByClaim, key)
	if err != nil {
		return false, fmt.Errorf("pods of claim %s: %w", key, err)
	}
	for _, obj := range objs {
		if !terminated(obj.(*corev1.Pod)) {
			return true, nil
		}
	}
	live, err := c.client.CoreV1().Pods(claim.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("list pods of namespace %s: %w", claim.Namespace, err)
	}
	for i := range live.Items {
		pod := &live.Items[i]
		if !terminated(pod) && slices.Contains(ClaimKeys(pod), key) {
			return true, nil
		}
	}
	return false, nil
}
