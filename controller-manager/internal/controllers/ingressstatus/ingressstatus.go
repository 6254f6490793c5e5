// Package ingressstatus is the controller that writes each Ingress's
// address (status.loadBalancer, the ADDRESS of `kubectl get ingress`): that
// of the Service its IngressClass names in the annotation PublishedService.
//
// Ingress controllers write it themselves (Traefik's publishedService), but
// Traefik does so one Ingress after another through a client held to client-go's
// default 5 requests a second, and builds its routes only once the writes are
// done: 1,000 Ingresses created at once took 200 s to serve. With the
// annotation the controller-manager writes the addresses and the proxy only
// routes.
package ingressstatus

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers. It is Trireme's own:
// upstream's controller-manager has no such controller.
const Name = "ingress-status"

// PublishedService is the IngressClass annotation naming, as
// namespace/name, the Service whose address the class's Ingresses show.
const PublishedService = "ingressclass.trireme.dev/published-service"

// The annotations that pick an Ingress's class besides spec.ingressClassName.
const (
	// defaultClass marks the IngressClass of Ingresses that name none.
	defaultClass = "ingressclass.kubernetes.io/is-default-class"
	// legacyClass is the Ingress annotation of the class's name from before
	// spec.ingressClassName.
	legacyClass = "kubernetes.io/ingress.class"
)

// ReasonServiceNotFound is the Warning Event on an IngressClass whose
// PublishedService names a Service that does not exist or is malformed.
const ReasonServiceNotFound = "PublishedServiceNotFound"

// Options configure the controller; every field is required.
type Options struct {
	// Client writes the Ingresses' status.
	Client kubernetes.Interface
	// Ingresses, IngressClasses and Services are the shared informers; New
	// registers its handlers.
	Ingresses      networkinginformers.IngressInformer
	IngressClasses networkinginformers.IngressClassInformer
	Services       coreinformers.ServiceInformer
	// Recorder records the Warning Events on the IngressClasses.
	Recorder record.EventRecorder
}

// Controller is the Ingress status controller.
type Controller struct {
	client    kubernetes.Interface
	ingresses networkinglisters.IngressLister
	classes   networkinglisters.IngressClassLister
	services  corelisters.ServiceLister
	recorder  record.EventRecorder
	loop      *worker.Loop
	synced    []cache.InformerSynced
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{
		client:    o.Client,
		ingresses: o.Ingresses.Lister(),
		classes:   o.IngressClasses.Lister(),
		services:  o.Services.Lister(),
		recorder:  o.Recorder,
		synced: []cache.InformerSynced{o.Ingresses.Informer().HasSynced, o.IngressClasses.Informer().HasSynced,
			o.Services.Informer().HasSynced},
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Ingresses.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch ingresses: %w", err)
	}
	// A class added, changed or removed may change every Ingress's address;
	// classes are few and rarely change.
	all := func(any) { c.enqueueAll() }
	if _, err := o.IngressClasses.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    all,
		UpdateFunc: func(_, obj any) { all(obj) },
		DeleteFunc: all,
	}); err != nil {
		return nil, fmt.Errorf("watch ingress classes: %w", err)
	}
	if _, err := o.Services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.servicePublished,
		UpdateFunc: func(old, obj any) {
			if o, ok := old.(*corev1.Service); ok {
				if s, ok := obj.(*corev1.Service); ok && sameAddress(o, s) {
					return
				}
			}
			c.servicePublished(obj)
		},
		DeleteFunc: c.servicePublished,
	}); err != nil {
		return nil, fmt.Errorf("watch services: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

// enqueueAll queues every Ingress.
func (c *Controller) enqueueAll() {
	ings, _ := c.ingresses.List(labels.Everything())
	for _, ing := range ings {
		c.loop.AddObject(ing)
	}
}

// servicePublished queues every Ingress when a class publishes the Service
// that obj is (or was).
func (c *Controller) servicePublished(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	classes, _ := c.classes.List(labels.Everything())
	for _, class := range classes {
		if class.Annotations[PublishedService] == key {
			c.enqueueAll()
			return
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ing, err := c.ingresses.Ingresses(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get ingress %s: %w", key, err)
	}
	class, err := c.classOf(ing)
	if class == nil || err != nil {
		return err
	}
	published := class.Annotations[PublishedService]
	if published == "" {
		return nil
	}
	svc, err := c.service(published)
	if err != nil {
		c.recorder.Eventf(class, corev1.EventTypeWarning, ReasonServiceNotFound, "%s %q: %v", PublishedService, published, err)
		return nil
	}
	want, ok := address(svc)
	if !ok || equality.Semantic.DeepEqual(ing.Status.LoadBalancer.Ingress, want) {
		return nil
	}
	update := ing.DeepCopy()
	update.Status.LoadBalancer.Ingress = want
	if _, err := c.client.NetworkingV1().Ingresses(namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of ingress %s: %w", key, err)
	}
	return nil
}

// classOf returns ing's IngressClass: the one it names, by spec or by the
// legacy annotation, else the default class; nil when there is none.
func (c *Controller) classOf(ing *networkingv1.Ingress) (*networkingv1.IngressClass, error) {
	name := ing.Annotations[legacyClass]
	if ing.Spec.IngressClassName != nil {
		name = *ing.Spec.IngressClassName
	}
	if name != "" {
		class, err := c.classes.Get(name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return class, err
	}
	classes, err := c.classes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, class := range classes {
		if class.Annotations[defaultClass] == "true" {
			return class, nil
		}
	}
	return nil, nil
}

// service returns the Service published names (namespace/name).
func (c *Controller) service(published string) (*corev1.Service, error) {
	namespace, name, ok := strings.Cut(published, "/")
	if !ok || namespace == "" || name == "" {
		return nil, fmt.Errorf("want namespace/name")
	}
	return c.services.Services(namespace).Get(name)
}

// address is what an Ingress published by svc shows: a LoadBalancer's
// addresses once it has them, else the Service's external IPs with its
// ports. ok is false while a LoadBalancer waits for its address, so that
// the Ingresses keep the one they have.
func address(svc *corev1.Service) ([]networkingv1.IngressLoadBalancerIngress, bool) {
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			return nil, false
		}
		out := make([]networkingv1.IngressLoadBalancerIngress, 0, len(svc.Status.LoadBalancer.Ingress))
		for _, lb := range svc.Status.LoadBalancer.Ingress {
			a := networkingv1.IngressLoadBalancerIngress{IP: lb.IP, Hostname: lb.Hostname}
			for _, p := range lb.Ports {
				a.Ports = append(a.Ports, networkingv1.IngressPortStatus{Port: p.Port, Protocol: p.Protocol, Error: p.Error})
			}
			out = append(out, a)
		}
		return out, true
	}
	var out []networkingv1.IngressLoadBalancerIngress
	for _, ip := range svc.Spec.ExternalIPs {
		a := networkingv1.IngressLoadBalancerIngress{IP: ip}
		for _, p := range svc.Spec.Ports {
			a.Ports = append(a.Ports, networkingv1.IngressPortStatus{Port: p.Port, Protocol: p.Protocol})
		}
		out = append(out, a)
	}
	return out, true
}

// sameAddress reports whether Ingresses published by a and by b show the
// same address.
func sameAddress(a, b *corev1.Service) bool {
	aa, aok := address(a)
	ba, bok := address(b)
	return aok == bok && equality.Semantic.DeepEqual(aa, ba)
}
