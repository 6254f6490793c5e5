package apiregistration

import (
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/kube-aggregator/pkg/controllers/autoregister"
)

// crdRegistration asks the autoregister controller for one APIService per
// group version some CRD serves, and for its removal once none does.
type crdRegistration struct {
	lister   apiextensionslisters.CustomResourceDefinitionLister
	synced   cache.InformerSynced
	register autoregister.AutoAPIServiceRegistration
	queue    workqueue.TypedRateLimitingInterface[schema.GroupVersion]
	// initial closes once the CRDs present at start are registered.
	initial chan struct{}
}

func newCRDRegistration(crds apiextensionsinformers.CustomResourceDefinitionInformer, register autoregister.AutoAPIServiceRegistration) *crdRegistration {
	c := &crdRegistration{
		lister:   crds.Lister(),
		synced:   crds.Informer().HasSynced,
		register: register,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[schema.GroupVersion](),
			workqueue.TypedRateLimitingQueueConfig[schema.GroupVersion]{Name: "crd_autoregistration"},
		),
		initial: make(chan struct{}),
	}
	// The registration cannot fail on an informer not yet started.
	_, _ = crds.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, cur any) {
			// A version dropped from the CRD needs its APIService checked too.
			c.enqueue(old)
			c.enqueue(cur)
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			c.enqueue(obj)
		},
	})
	return c
}

func (c *crdRegistration) enqueue(obj any) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	for _, v := range crd.Spec.Versions {
		c.queue.Add(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name})
	}
}

// run registers the CRDs present at start, signals waitForInitialSync, and
// then follows changes with workers until stop closes.
func (c *crdRegistration) run(workers int, stop <-chan struct{}) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	if !cache.WaitForNamedCacheSync("crd-autoregister", stop, c.synced) {
		return
	}
	crds, err := c.lister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("list CRDs for APIService registration: %w", err))
		return
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if err := c.sync(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}); err != nil {
				utilruntime.HandleError(err)
			}
		}
	}
	close(c.initial)
	for range workers {
		go wait.Until(c.work, time.Second, stop)
	}
	<-stop
}

// waitForInitialSync reports whether the initial registration finished
// before stop closed.
func (c *crdRegistration) waitForInitialSync(stop <-chan struct{}) bool {
	select {
	case <-c.initial:
		return true
	case <-stop:
		return false
	}
}

func (c *crdRegistration) work() {
	for c.next() {
	}
}

func (c *crdRegistration) next() bool {
	gv, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(gv)
	if err := c.sync(gv); err != nil {
		utilruntime.HandleError(err)
		c.queue.AddRateLimited(gv)
		return true
	}
	c.queue.Forget(gv)
	return true
}

// sync registers gv's APIService if any CRD serves gv, and unregisters it
// otherwise.
func (c *crdRegistration) sync(gv schema.GroupVersion) error {
	name := gv.Version + "." + gv.Group
	crds, err := c.lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list CRDs for APIService %s: %w", name, err)
	}
	for _, crd := range crds {
		if crd.Spec.Group != gv.Group {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gv.Version && v.Served {
				c.register.AddAPIServiceToSync(newAPIService(gv, crdPriority))
				return nil
			}
		}
	}
	klog.V(2).InfoS("No CRD serves the group version any more", "apiService", name)
	c.register.RemoveAPIServiceToSync(name)
	return nil
}
