// Package ingressrefs is the controller that tells an Ingress's owner what
// it names that does not exist: a backend Service, a port of that Service,
// or a TLS Secret of its namespace. Each gets a Warning Event on the
// Ingress, which `kubectl describe ingress` shows; ingress controllers
// (Traefik among them) only log these and go on serving the Ingress's other
// paths, so without the Event the mistake is invisible to its author.
package ingressrefs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers. It is Trireme's own:
// upstream's controller-manager has no such controller.
const Name = "ingress-references"

// The reasons of the Warning Events.
const (
	// ReasonServiceNotFound: a backend names a Service the namespace lacks.
	ReasonServiceNotFound = "ServiceNotFound"
	// ReasonServicePortNotFound: the backend's Service exists but has no
	// port of the number or name the backend gives.
	ReasonServicePortNotFound = "ServicePortNotFound"
	// ReasonSecretNotFound: a TLS entry names a Secret the namespace lacks.
	ReasonSecretNotFound = "SecretNotFound"
)

// Options configure the controller; every field is required.
type Options struct {
	// Ingresses is the shared Ingress informer; New registers its handlers.
	Ingresses networkinginformers.IngressInformer
	// Services is the shared Service informer; New registers its handlers.
	Services coreinformers.ServiceInformer
	// Secrets is a metadata-only informer of Secrets: only their names
	// matter here, so no Secret's data is held in memory.
	Secrets informers.GenericInformer
	// Recorder records the Warning Events on the Ingresses.
	Recorder record.EventRecorder
}

// Controller is the Ingress references controller.
type Controller struct {
	ingresses networkinglisters.IngressLister
	services  corelisters.ServiceLister
	secrets   cache.GenericLister
	recorder  record.EventRecorder
	loop      *worker.Loop
	synced    []cache.InformerSynced

	mu sync.Mutex
	// warned holds, per Ingress key, the problems already reported for the
	// Ingress of that UID, so that a resync or an unrelated change does not
	// repeat them; a problem that goes away and comes back is reported
	// again. It is memory only: a new leader reports each problem once more.
	warned map[string]report
}

// report is what has been reported for one Ingress.
type report struct {
	uid      types.UID
	problems sets.Set[problem]
}

// problem is one Warning Event.
type problem struct {
	reason, message string
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{
		ingresses: o.Ingresses.Lister(),
		services:  o.Services.Lister(),
		secrets:   o.Secrets.Lister(),
		recorder:  o.Recorder,
		synced: []cache.InformerSynced{o.Ingresses.Informer().HasSynced, o.Services.Informer().HasSynced,
			o.Secrets.Informer().HasSynced},
		warned: map[string]report{},
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Ingresses.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}); err != nil {
		return nil, fmt.Errorf("watch ingresses: %w", err)
	}
	service := func(obj any) {
		if s, ok := worker.ObjectAs[*corev1.Service](obj); ok {
			c.enqueueReferencing(s.Namespace, s.Name, usesService)
		}
	}
	if _, err := o.Services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: service,
		// Only the ports matter; a Service's status changes far more often.
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*corev1.Service)
			s, ok2 := obj.(*corev1.Service)
			if ok1 && ok2 && !equality.Semantic.DeepEqual(o.Spec.Ports, s.Spec.Ports) {
				service(obj)
			}
		},
		DeleteFunc: service,
	}); err != nil {
		return nil, fmt.Errorf("watch services: %w", err)
	}
	secret := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			if ns, name, err := cache.SplitMetaNamespaceKey(key); err == nil {
				c.enqueueReferencing(ns, name, usesSecret)
			}
		}
	}
	if _, err := o.Secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    secret,
		DeleteFunc: secret,
	}); err != nil {
		return nil, fmt.Errorf("watch secrets: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

// enqueueReferencing queues the Ingresses of namespace that name name as
// uses says.
func (c *Controller) enqueueReferencing(namespace, name string, uses func(*networkingv1.Ingress, string) bool) {
	ings, err := c.ingresses.Ingresses(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, ing := range ings {
		if uses(ing, name) {
			c.loop.AddObject(ing)
		}
	}
}

// backend is one Service backend of an Ingress and where it is used.
type backend struct {
	where   string
	service *networkingv1.IngressServiceBackend
}

// backends lists ing's Service backends: resource backends name no Service.
func backends(ing *networkingv1.Ingress) []backend {
	var out []backend
	if b := ing.Spec.DefaultBackend; b != nil && b.Service != nil {
		out = append(out, backend{"default backend", b.Service})
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		host := r.Host
		if host == "" {
			host = "*"
		}
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil {
				out = append(out, backend{"backend of " + host + p.Path, p.Backend.Service})
			}
		}
	}
	return out
}

func usesService(ing *networkingv1.Ingress, name string) bool {
	return slices.ContainsFunc(backends(ing), func(b backend) bool { return b.service.Name == name })
}

func usesSecret(ing *networkingv1.Ingress, name string) bool {
	return slices.ContainsFunc(ing.Spec.TLS, func(t networkingv1.IngressTLS) bool { return t.SecretName == name })
}

func (c *Controller) sync(_ context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ing, err := c.ingresses.Ingresses(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.warned, key)
		c.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("get ingress %s: %w", key, err)
	}
	found, err := c.problems(ing)
	if err != nil {
		return fmt.Errorf("check references of ingress %s: %w", key, err)
	}
	c.mu.Lock()
	last := c.warned[key]
	if last.uid != ing.UID {
		last = report{}
	}
	if len(found) == 0 {
		delete(c.warned, key)
	} else {
		c.warned[key] = report{uid: ing.UID, problems: sets.New(found...)}
	}
	c.mu.Unlock()
	for _, p := range found {
		if !last.problems.Has(p) {
			c.recorder.Event(ing, corev1.EventTypeWarning, p.reason, p.message)
		}
	}
	return nil
}

// problems lists what ing names that does not exist, one problem per
// missing Service, Service port and Secret, each saying where it is named.
func (c *Controller) problems(ing *networkingv1.Ingress) ([]problem, error) {
	type subject struct{ reason, what string }
	var order []subject
	where := map[subject][]string{}
	add := func(s subject, w string) {
		if _, ok := where[s]; !ok {
			order = append(order, s)
		}
		if !slices.Contains(where[s], w) {
			where[s] = append(where[s], w)
		}
	}
	for _, b := range backends(ing) {
		svc, err := c.services.Services(ing.Namespace).Get(b.service.Name)
		if apierrors.IsNotFound(err) {
			add(subject{ReasonServiceNotFound, fmt.Sprintf("Service %q not found in namespace %s", b.service.Name, ing.Namespace)}, b.where)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get service %s/%s: %w", ing.Namespace, b.service.Name, err)
		}
		if !hasPort(svc, b.service.Port) {
			add(subject{ReasonServicePortNotFound, fmt.Sprintf("Service %q has no port %s", b.service.Name, portString(b.service.Port))}, b.where)
		}
	}
	for _, t := range ing.Spec.TLS {
		if t.SecretName == "" {
			continue // TLS with the controller's default certificate
		}
		_, err := c.secrets.ByNamespace(ing.Namespace).Get(t.SecretName)
		if apierrors.IsNotFound(err) {
			hosts := strings.Join(t.Hosts, ", ")
			if hosts == "" {
				hosts = "every host"
			}
			add(subject{ReasonSecretNotFound, fmt.Sprintf("Secret %q not found in namespace %s", t.SecretName, ing.Namespace)}, "TLS of "+hosts)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get secret %s/%s: %w", ing.Namespace, t.SecretName, err)
		}
	}
	var out []problem
	for _, s := range order {
		out = append(out, problem{s.reason, fmt.Sprintf("%s (%s)", s.what, strings.Join(where[s], "; "))})
	}
	return out, nil
}

// hasPort reports whether svc has the backend's port: by number, or by a
// non-empty name.
func hasPort(svc *corev1.Service, port networkingv1.ServiceBackendPort) bool {
	return slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
		return (port.Number != 0 && p.Port == port.Number) || (port.Name != "" && p.Name == port.Name)
	})
}

func portString(port networkingv1.ServiceBackendPort) string {
	if port.Name != "" {
		return fmt.Sprintf("named %q", port.Name)
	}
	return fmt.Sprint(port.Number)
}
