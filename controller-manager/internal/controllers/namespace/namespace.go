// Package namespace is the controller that empties a deleted namespace:
// it discovers every namespaced resource (custom resources included),
// deletes every object in the namespace (pods first, the rest once no pod
// is left), reports progress in the NamespaceDeletion* and
// NamespaceContentRemaining/NamespaceFinalizersRemaining conditions, and
// once nothing remains removes the "kubernetes" finalizer through
// namespaces/finalize so the apiserver can delete it.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "namespace"

// Condition reasons and messages, as upstream words them.
const (
	reasonDiscoveryFailed    = "DiscoveryFailed"
	reasonDiscovered         = "ResourcesDiscovered"
	reasonGVParsingFailed    = "GroupVersionParsingFailed"
	reasonGVParsed           = "ParsedGroupVersions"
	reasonContentFailed      = "ContentDeletionFailed"
	reasonContentDeleted     = "ContentDeleted"
	reasonSomeRemain         = "SomeResourcesRemain"
	reasonContentRemoved     = "ContentRemoved"
	reasonFinalizersRemain   = "SomeFinalizersRemain"
	reasonNoFinalizersRemain = "ContentHasNoFinalizers"
	defaultRemainingRecheck  = 2 * time.Second
	finalizerKubernetes      = corev1.FinalizerKubernetes
)

// podsResource is deleted before every other resource.
var podsResource = corev1.SchemeGroupVersion.WithResource("pods")

// Options configure the controller; every field is required.
type Options struct {
	// Client writes namespace status and calls namespaces/finalize.
	Client kubernetes.Interface
	// Metadata lists and deletes the objects in a namespace.
	Metadata metadata.Interface
	// Discovery lists the namespaced resources.
	Discovery discovery.DiscoveryInterface
	// Namespaces is the shared namespace informer; New registers its
	// handlers.
	Namespaces coreinformers.NamespaceInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
}

// Controller deletes namespaces' content; its queue holds namespace names.
type Controller struct {
	client     kubernetes.Interface
	meta       metadata.Interface
	discovery  discovery.DiscoveryInterface
	recorder   record.EventRecorder
	namespaces corelisters.NamespaceLister
	synced     cache.InformerSynced
	loop       *worker.Loop

	// noCollection remembers resources whose deletecollection failed as
	// not allowed, so they are deleted one object at a time.
	mu           sync.Mutex
	noCollection sets.Set[schema.GroupVersionResource]
}

// New returns the controller with its event handlers registered.
func New(o Options) (*Controller, error) {
	c := &Controller{
		client:       o.Client,
		meta:         o.Metadata,
		discovery:    o.Discovery,
		recorder:     o.Recorder,
		namespaces:   o.Namespaces.Lister(),
		synced:       o.Namespaces.Informer().HasSynced,
		noCollection: sets.New[schema.GroupVersionResource](),
	}
	c.loop = worker.New(Name, c.sync)
	queue := func(obj any) {
		ns, ok := worker.ObjectAs[*corev1.Namespace](obj)
		if ok && ns.DeletionTimestamp != nil {
			c.loop.Add(ns.Name)
		}
	}
	if _, err := o.Namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    queue,
		UpdateFunc: func(_, obj any) { queue(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch namespaces: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced)
}

// remaining tallies what is left in a namespace after a deletion pass.
type remaining struct {
	// objects counts objects left, by "resource.group".
	objects map[string]int
	// finalizers counts objects left, by finalizer they carry.
	finalizers map[string]int
}

func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.namespaces.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", name, err)
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	// Read it live: the cache may lag a finalize this controller made.
	ns, err = c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", name, err)
	}
	if !slices.Contains(ns.Spec.Finalizers, finalizerKubernetes) {
		return nil
	}

	conds := map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	set := func(t corev1.NamespaceConditionType, failed bool, reason, msg string) {
		status := corev1.ConditionFalse
		if failed {
			status = corev1.ConditionTrue
		}
		conds[t] = corev1.NamespaceCondition{Type: t, Status: status, Reason: reason, Message: msg}
	}

	resources, discErr := c.namespacedResources()
	if discErr != nil {
		set(corev1.NamespaceDeletionDiscoveryFailure, true, reasonDiscoveryFailed, "Discovery failed for some groups: "+discErr.Error())
	} else {
		set(corev1.NamespaceDeletionDiscoveryFailure, false, reasonDiscovered, "All resources successfully discovered")
	}
	set(corev1.NamespaceDeletionGVParsingFailure, false, reasonGVParsed, "All legacy kube types successfully parsed")

	left := remaining{objects: map[string]int{}, finalizers: map[string]int{}}
	var delErrs []error
	// Pods go first, and the rest only once none is left (upstream's
	// OrderedNamespaceDeletion): what a pod still running uses — its
	// ConfigMaps, Secrets, claims, service account — stays until it ends.
	if i := slices.Index(resources, podsResource); i >= 0 {
		resources = slices.Delete(slices.Clone(resources), i, i+1)
		if err := c.deleteAll(ctx, podsResource, name, &left); err != nil {
			delErrs = append(delErrs, err)
		}
		if len(left.objects) > 0 {
			resources = nil
		}
	}
	for _, gvr := range resources {
		if err := c.deleteAll(ctx, gvr, name, &left); err != nil {
			delErrs = append(delErrs, err)
		}
	}
	if len(delErrs) > 0 {
		set(corev1.NamespaceDeletionContentFailure, true, reasonContentFailed, "Failed to delete all resource types, "+
			fmt.Sprint(len(delErrs))+" remaining: "+errors.Join(delErrs...).Error())
	} else {
		set(corev1.NamespaceDeletionContentFailure, false, reasonContentDeleted, "All content successfully deleted, may be waiting on finalization")
	}
	if len(left.objects) > 0 {
		set(corev1.NamespaceContentRemaining, true, reasonSomeRemain, "Some resources are remaining: "+tally(left.objects, "resource instances"))
	} else {
		set(corev1.NamespaceContentRemaining, false, reasonContentRemoved, "All content successfully removed")
	}
	if len(left.finalizers) > 0 {
		set(corev1.NamespaceFinalizersRemaining, true, reasonFinalizersRemain, "Some content in the namespace has finalizers remaining: "+tally(left.finalizers, "resource instances"))
	} else {
		set(corev1.NamespaceFinalizersRemaining, false, reasonNoFinalizersRemain, "All content-preserving finalizers finished")
	}
	ns, err = c.writeConditions(ctx, ns, conds)
	if err != nil {
		return err
	}
	if discErr != nil || len(delErrs) > 0 {
		return fmt.Errorf("delete content of namespace %s: %w", name, errors.Join(append(delErrs, discErr)...))
	}
	if len(left.objects) > 0 {
		// Objects finishing graceful deletion or waiting on finalizers: look
		// again shortly rather than back off exponentially.
		c.loop.AddAfter(name, defaultRemainingRecheck)
		return nil
	}
	ns.Spec.Finalizers = slices.DeleteFunc(slices.Clone(ns.Spec.Finalizers), func(f corev1.FinalizerName) bool { return f == finalizerKubernetes })
	_, err = c.client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalize namespace %s: %w", name, err)
	}
	return nil
}

// namespacedResources returns the namespaced resources that can be
// deleted and listed, in their preferred versions. A partial discovery
// returns what was found with the error.
func (c *Controller) namespacedResources() ([]schema.GroupVersionResource, error) {
	lists, err := c.discovery.ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists)
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			gvr := gv.WithResource(r.Name)
			if !slices.Contains(r.Verbs, "deletecollection") {
				c.mu.Lock()
				c.noCollection.Insert(gvr)
				c.mu.Unlock()
			}
			out = append(out, gvr)
		}
	}
	return out, err
}

// deleteAll deletes every object of gvr in ns (in the background: the
// garbage collector takes their dependents), then counts what is left.
func (c *Controller) deleteAll(ctx context.Context, gvr schema.GroupVersionResource, ns string, left *remaining) error {
	client := c.meta.Resource(gvr).Namespace(ns)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	// Most resources hold nothing in a given namespace: one list says so,
	// which is cheaper than a deletecollection and a list.
	list, err := client.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", gvr, err)
	}
	if len(list.Items) == 0 {
		return nil
	}
	c.mu.Lock()
	oneByOne := c.noCollection.Has(gvr)
	c.mu.Unlock()
	if !oneByOne {
		err := client.DeleteCollection(ctx, opts, metav1.ListOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
		case apierrors.IsMethodNotSupported(err):
			c.mu.Lock()
			c.noCollection.Insert(gvr)
			c.mu.Unlock()
			oneByOne = true
		default:
			return fmt.Errorf("deletecollection %s: %w", gvr, err)
		}
		if !oneByOne {
			if list, err = client.List(ctx, metav1.ListOptions{}); err != nil {
				return fmt.Errorf("list %s: %w", gvr, err)
			}
		}
	}
	var errs []error
	if oneByOne && len(list.Items) > 0 {
		for i := range list.Items {
			item := &list.Items[i]
			if item.DeletionTimestamp != nil {
				continue
			}
			err := client.Delete(ctx, item.Name, opts)
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete %s %s: %w", gvr.Resource, item.Name, err))
			}
		}
		// What the deletes left: objects with finalizers or a grace period.
		if list, err = client.List(ctx, metav1.ListOptions{}); err != nil {
			return errors.Join(append(errs, fmt.Errorf("list %s: %w", gvr, err))...)
		}
	}
	for i := range list.Items {
		left.objects[gvr.Resource+"."+gvr.Group]++
		for _, f := range list.Items[i].Finalizers {
			left.finalizers[f]++
		}
	}
	return errors.Join(errs...)
}

// writeConditions stores conds on ns's status, keeping the transition
// time of conditions whose status did not change, and writes only when
// something did.
func (c *Controller) writeConditions(ctx context.Context, ns *corev1.Namespace, conds map[corev1.NamespaceConditionType]corev1.NamespaceCondition) (*corev1.Namespace, error) {
	now := metav1.Now()
	updated := ns.DeepCopy()
	changed := false
	for _, t := range slices.Sorted(maps.Keys(conds)) {
		want := conds[t]
		i := slices.IndexFunc(updated.Status.Conditions, func(c corev1.NamespaceCondition) bool { return c.Type == t })
		if i < 0 {
			want.LastTransitionTime = now
			updated.Status.Conditions = append(updated.Status.Conditions, want)
			changed = true
			continue
		}
		cur := updated.Status.Conditions[i]
		if cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
			continue
		}
		want.LastTransitionTime = cur.LastTransitionTime
		if cur.Status != want.Status {
			want.LastTransitionTime = now
		}
		updated.Status.Conditions[i] = want
		changed = true
	}
	if !changed {
		return ns, nil
	}
	out, err := c.client.CoreV1().Namespaces().UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status of namespace %s: %w", ns.Name, err)
	}
	return out, nil
}

// tally renders counts as upstream's condition messages do:
// "pods. has 2 resource instances, secrets. has 1 resource instances".
func tally(counts map[string]int, what string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s has %d %s", k, counts[k], what))
	}
	return strings.Join(parts, ", ")
}
