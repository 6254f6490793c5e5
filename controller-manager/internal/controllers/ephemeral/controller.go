// Package ephemeral is the ephemeral-volume controller: for each `ephemeral`
// volume of a pod it creates the PersistentVolumeClaim named
// <pod>-<volume> from the volume's claim template, owned by the pod so that
// the garbage collector removes it with the pod.
package ephemeral

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "ephemeral-volume"

// Options configure the controller; every field is required.
type Options struct {
	// Client creates the claims.
	Client kubernetes.Interface
	// Pods and Claims are the shared informers; New registers its handlers
	// on both.
	Pods   coreinformers.PodInformer
	Claims coreinformers.PersistentVolumeClaimInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
}

// Controller creates ephemeral volume claims. Its queue holds pod keys.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	pods     corelisters.PodLister
	claims   corelisters.PersistentVolumeClaimLister
	synced   []cache.InformerSynced
	loop     *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		pods:   o.Pods.Lister(),
		claims: o.Claims.Lister(),
		synced: []cache.InformerSynced{o.Pods.Informer().HasSynced, o.Claims.Informer().HasSynced},
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podChanged,
		UpdateFunc: func(_, obj any) { c.podChanged(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	// A claim deleted while its pod lives is made again.
	if _, err := o.Claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			pvc, ok := worker.ObjectAs[*corev1.PersistentVolumeClaim](obj)
			if !ok {
				return
			}
			if ref := metav1.GetControllerOf(pvc); ref != nil && ref.Kind == "Pod" && ref.APIVersion == "v1" {
				c.loop.Add(pvc.Namespace + "/" + ref.Name)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("watch persistentvolumeclaims: %w", err)
	}
	return c, nil
}

// Run creates claims with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) podChanged(obj any) {
	pod, ok := worker.ObjectAs[*corev1.Pod](obj)
	if !ok || pod.DeletionTimestamp != nil {
		return
	}
	for _, v := range pod.Spec.Volumes {
		if v.Ephemeral != nil {
			c.loop.AddObject(pod)
			return
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", key, err)
	}
	if pod.DeletionTimestamp != nil {
		return nil
	}
	for i := range pod.Spec.Volumes {
		if err := c.ensureClaim(ctx, pod, &pod.Spec.Volumes[i]); err != nil {
			return err
		}
	}
	return nil
}

// ensureClaim creates the claim of one ephemeral volume. A claim of that
// name the pod does not own is never taken over: the pod cannot start,
// and an Event says why.
func (c *Controller) ensureClaim(ctx context.Context, pod *corev1.Pod, vol *corev1.Volume) error {
	if vol.Ephemeral == nil || vol.Ephemeral.VolumeClaimTemplate == nil {
		return nil
	}
	name := ephemeral.VolumeClaimName(pod, vol)
	existing, err := c.claims.PersistentVolumeClaims(pod.Namespace).Get(name)
	if err == nil {
		if err := ephemeral.VolumeIsForPod(pod, existing); err != nil {
			c.recorder.Eventf(pod, corev1.EventTypeWarning, "FailedBinding", "ephemeral volume %s: %v", vol.Name, err)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get claim %s/%s: %w", pod.Namespace, name, err)
	}
	tmpl := vol.Ephemeral.VolumeClaimTemplate
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   pod.Namespace,
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: tmpl.Spec,
	}
	_, err = c.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Create(ctx, claim, metav1.CreateOptions{})
	switch {
	case err == nil:
		logr.FromContextOrDiscard(ctx).V(2).Info("Created ephemeral volume claim", "pod", pod.Namespace+"/"+pod.Name, "claim", name)
	case apierrors.IsAlreadyExists(err):
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		// A template the apiserver refuses will not improve by retrying.
		c.recorder.Eventf(pod, corev1.EventTypeWarning, "FailedCreate", "creating claim %s for ephemeral volume %s: %v", name, vol.Name, err)
	default:
		return fmt.Errorf("create claim %s/%s: %w", pod.Namespace, name, err)
	}
	return nil
}
