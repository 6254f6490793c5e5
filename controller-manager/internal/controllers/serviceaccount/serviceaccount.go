// Package serviceaccount is the controller that gives every active
// namespace its "default" ServiceAccount, and puts it back when it is
// deleted: ServiceAccount admission refuses pods until it exists.
package serviceaccount

import (
	"context"
	"errors"
	"fmt"

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
const Name = "serviceaccount"

// DefaultName is the ServiceAccount every namespace gets.
const DefaultName = "default"

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client creates the ServiceAccounts.
	Client kubernetes.Interface
	// Namespaces and ServiceAccounts are the shared informers; New
	// registers its handlers on both.
	Namespaces      coreinformers.NamespaceInformer
	ServiceAccounts coreinformers.ServiceAccountInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Accounts are the ServiceAccounts every namespace gets; nil means
	// DefaultName only, as upstream.
	Accounts []string
}

// Controller ensures the listed ServiceAccounts exist in every active
// namespace. Its queue holds namespace names.
type Controller struct {
	client     kubernetes.Interface
	recorder   record.EventRecorder
	accounts   []string
	namespaces corelisters.NamespaceLister
	sas        corelisters.ServiceAccountLister
	synced     []cache.InformerSynced
	loop       *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Accounts == nil {
		o.Accounts = []string{DefaultName}
	}
	c := &Controller{
		client:     o.Client,
		recorder:   o.Recorder,
		accounts:   o.Accounts,
		namespaces: o.Namespaces.Lister(),
		sas:        o.ServiceAccounts.Lister(),
		synced:     []cache.InformerSynced{o.Namespaces.Informer().HasSynced, o.ServiceAccounts.Informer().HasSynced},
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch namespaces: %w", err)
	}
	// Only a deletion can take an account away; creating and updating it
	// cannot make the namespace need work.
	if _, err := o.ServiceAccounts.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.accountDeleted,
	}); err != nil {
		return nil, fmt.Errorf("watch serviceaccounts: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) accountDeleted(obj any) {
	sa, ok := worker.ObjectAs[*corev1.ServiceAccount](obj)
	if !ok {
		return
	}
	for _, name := range c.accounts {
		if sa.Name == name {
			c.loop.Add(sa.Namespace)
			return
		}
	}
}

// sync creates the accounts namespace lacks, unless it is going away.
func (c *Controller) sync(ctx context.Context, namespace string) error {
	ns, err := c.namespaces.Get(namespace)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", namespace, err)
	}
	if ns.Status.Phase == corev1.NamespaceTerminating {
		return nil
	}
	var errs []error
	for _, name := range c.accounts {
		_, err := c.sas.ServiceAccounts(namespace).Get(name)
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("get serviceaccount %s/%s: %w", namespace, name, err))
			continue
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		_, err = c.client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
		case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// The namespace began terminating after the cache saw it; it
			// refuses new objects and needs none.
		default:
			c.recorder.Eventf(ns, corev1.EventTypeWarning, "FailedCreate", "Error creating ServiceAccount %q: %v", name, err)
			errs = append(errs, fmt.Errorf("create serviceaccount %s/%s: %w", namespace, name, err))
		}
	}
	return errors.Join(errs...)
}
