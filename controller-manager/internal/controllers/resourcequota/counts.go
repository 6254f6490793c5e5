package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"trireme.dev/controller-manager/internal/worker"
)

// Resolver finds the served version of a group and resource (a RESTMapper
// over discovery). When it also implements meta.ResettableRESTMapper, a miss
// resets it once so that resources added since (CRDs) are found.
type Resolver interface {
	ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error)
}

// errUnknownResource marks a count/<resource>.<group> the apiserver does not
// serve: quota cannot count it, and retrying does not help until discovery
// changes.
var errUnknownResource = errors.New("resource not served")

// counter counts objects of any resource per namespace from metadata-only
// informers, started the first time a quota names the resource so that
// resources nobody limits cost nothing.
type counter struct {
	factory  metadatainformer.SharedInformerFactory
	resolver Resolver
	onChange func(namespace string, lower bool)

	mu      sync.Mutex
	ctx     context.Context
	started map[schema.GroupResource]informers.GenericInformer
	// unknown remembers when discovery last failed to find a resource, so
	// that a quota naming one does not refetch discovery at every event.
	unknown map[schema.GroupResource]time.Time
	now     func() time.Time
}

// unknownRetry is how long a resource discovery did not find is taken as
// absent before discovery is asked again.
const unknownRetry = time.Minute

// run makes informers started from now on live as long as ctx.
func (c *counter) run(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
	c.factory.Start(ctx.Done())
}

// count returns how many objects of gr exist in namespace. ready is false
// while the resource's informer has not finished its first list.
func (c *counter) count(gr schema.GroupResource, namespace string) (n int64, ready bool, err error) {
	inf, err := c.informer(gr)
	if err != nil {
		return 0, false, err
	}
	if !inf.Informer().HasSynced() {
		return 0, false, nil
	}
	objs, err := inf.Lister().ByNamespace(namespace).List(labels.Everything())
	if err != nil {
		return 0, false, fmt.Errorf("list %s in %s: %w", gr, namespace, err)
	}
	return int64(len(objs)), true, nil
}

func (c *counter) informer(gr schema.GroupResource) (informers.GenericInformer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf, ok := c.started[gr]; ok {
		return inf, nil
	}
	if c.ctx == nil {
		return nil, fmt.Errorf("count %s: counter not running", gr)
	}
	if at, ok := c.unknown[gr]; ok && c.now().Sub(at) < unknownRetry {
		return nil, fmt.Errorf("count %s: %w", gr, errUnknownResource)
	}
	gvr, err := c.resolve(gr)
	if errors.Is(err, errUnknownResource) {
		if c.unknown == nil {
			c.unknown = map[schema.GroupResource]time.Time{}
		}
		c.unknown[gr] = c.now()
	}
	if err != nil {
		return nil, err
	}
	delete(c.unknown, gr)
	inf := c.factory.ForResource(gvr)
	changed := func(lower bool) func(obj any) {
		return func(obj any) {
			if m, ok := worker.ObjectAs[*metav1.PartialObjectMetadata](obj); ok {
				c.onChange(m.Namespace, lower)
			}
		}
	}
	// Only creations and deletions change a count.
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: changed(false), DeleteFunc: changed(true)}); err != nil {
		return nil, fmt.Errorf("watch %s: %w", gr, err)
	}
	c.factory.Start(c.ctx.Done())
	if c.started == nil {
		c.started = map[schema.GroupResource]informers.GenericInformer{}
	}
	c.started[gr] = inf
	return inf, nil
}

func (c *counter) resolve(gr schema.GroupResource) (schema.GroupVersionResource, error) {
	if gr.Group == "" {
		// Core resources have one version; no discovery round trip needed.
		if _, legacy := legacyCountNames[gr.Resource]; legacy {
			return gr.WithVersion("v1"), nil
		}
	}
	gvr, err := c.resolver.ResourceFor(gr.WithVersion(""))
	if err != nil {
		if r, ok := c.resolver.(meta.ResettableRESTMapper); ok {
			r.Reset()
			gvr, err = c.resolver.ResourceFor(gr.WithVersion(""))
		}
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return schema.GroupVersionResource{}, fmt.Errorf("count %s: %w", gr, errUnknownResource)
		}
		return schema.GroupVersionResource{}, fmt.Errorf("resolve %s: %w", gr, err)
	}
	return gvr, nil
}

// legacyCountNames are the core resources counted under their legacy names.
var legacyCountNames = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, r := range legacyCounts {
		m[r] = struct{}{}
	}
	return m
}()
