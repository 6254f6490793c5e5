// Package rootcacertpublisher is the controller that publishes the cluster's
// root CA bundle to every namespace as the ConfigMap kube-root-ca.crt, the
// file projected service account token volumes mount as ca.crt.
package rootcacertpublisher

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "root-ca-cert-publisher"

const (
	// ConfigMapName is the ConfigMap published in every namespace.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey holds the PEM bundle.
	DataKey = "ca.crt"
	// DescriptionAnnotation and Description are what upstream sets, so that
	// tools comparing the object with upstream's see the same text.
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Options configure the controller; every field is required.
type Options struct {
	// Client writes the ConfigMaps.
	Client kubernetes.Interface
	// Namespaces and ConfigMaps are the shared informers; New registers
	// its handlers on both.
	Namespaces coreinformers.NamespaceInformer
	ConfigMaps coreinformers.ConfigMapInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// RootCA is the PEM bundle to publish (--root-ca-file); New fails
	// when it is empty.
	RootCA []byte
}

// Controller keeps kube-root-ca.crt equal to the CA bundle in every
// namespace. Its queue holds namespace names.
type Controller struct {
	client     kubernetes.Interface
	recorder   record.EventRecorder
	rootCA     []byte
	namespaces corelisters.NamespaceLister
	configMaps corelisters.ConfigMapLister
	synced     []cache.InformerSynced
	loop       *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if len(o.RootCA) == 0 {
		return nil, fmt.Errorf("%s: no root CA bundle", Name)
	}
	p := &Controller{
		client:     o.Client,
		recorder:   o.Recorder,
		rootCA:     o.RootCA,
		namespaces: o.Namespaces.Lister(),
		configMaps: o.ConfigMaps.Lister(),
		synced:     []cache.InformerSynced{o.Namespaces.Informer().HasSynced, o.ConfigMaps.Informer().HasSynced},
	}
	p.loop = worker.New(Name, p.sync)
	if _, err := o.Namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.loop.AddObject,
		UpdateFunc: func(_, obj any) { p.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch namespaces: %w", err)
	}
	// Somebody else editing or deleting the ConfigMap puts it back.
	if _, err := o.ConfigMaps.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { p.configMapChanged(obj) },
		DeleteFunc: p.configMapChanged,
	}); err != nil {
		return nil, fmt.Errorf("watch configmaps: %w", err)
	}
	return p, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (p *Controller) Run(ctx context.Context, workers int) {
	p.loop.Run(ctx, workers, p.synced...)
}

func (p *Controller) configMapChanged(obj any) {
	cm, ok := worker.ObjectAs[*corev1.ConfigMap](obj)
	if !ok || cm.Name != ConfigMapName {
		return
	}
	p.loop.Add(cm.Namespace)
}

// sync creates or corrects the namespace's ConfigMap.
func (p *Controller) sync(ctx context.Context, namespace string) error {
	ns, err := p.namespaces.Get(namespace)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", namespace, err)
	}
	if ns.Status.Phase == corev1.NamespaceTerminating {
		return nil
	}
	cm, err := p.configMaps.ConfigMaps(namespace).Get(ConfigMapName)
	if apierrors.IsNotFound(err) {
		return p.create(ctx, ns)
	}
	if err != nil {
		return fmt.Errorf("get configmap %s/%s: %w", namespace, ConfigMapName, err)
	}
	if p.upToDate(cm) {
		return nil
	}
	// Other keys are dropped, as upstream does: the object is the
	// controller's, and its data must be exactly the bundle.
	cm = cm.DeepCopy()
	cm.Data = map[string]string{DataKey: string(p.rootCA)}
	cm.BinaryData = nil
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	if _, err := p.client.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		// A conflict or a deletion only means the cache is behind: the retry
		// sees the newer state, and is no event worth recording.
		if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			p.recorder.Eventf(ns, corev1.EventTypeWarning, "FailedUpdate", "Error updating ConfigMap %s: %v", ConfigMapName, err)
		}
		return fmt.Errorf("update configmap %s/%s: %w", namespace, ConfigMapName, err)
	}
	return nil
}

func (p *Controller) upToDate(cm *corev1.ConfigMap) bool {
	want := map[string]string{DataKey: string(p.rootCA)}
	return maps.Equal(cm.Data, want) && len(cm.BinaryData) == 0 &&
		cm.Annotations[DescriptionAnnotation] == Description
}

func (p *Controller) create(ctx context.Context, ns *corev1.Namespace) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:        ConfigMapName,
			Namespace:   ns.Name,
			Annotations: map[string]string{DescriptionAnnotation: Description},
		},
		Data: map[string]string{DataKey: string(p.rootCA)},
	}
	_, err := p.client.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		// An existing one is checked when the informer delivers it.
		return nil
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil
	}
	p.recorder.Eventf(ns, corev1.EventTypeWarning, "FailedCreate", "Error creating ConfigMap %s: %v", ConfigMapName, err)
	return fmt.Errorf("create configmap %s/%s: %w", ns.Name, ConfigMapName, err)
}
