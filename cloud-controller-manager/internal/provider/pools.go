package provider

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	api "trireme.dev/api/config/cloudconfig"
	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
	"trireme.dev/cloud-controller-manager/internal/allocator"
)

// Condition of an AddressPool the provider writes.
const (
	conditionValid = "Valid"
	reasonAccepted = "Accepted"
	reasonOverlap  = "Overlap"
	reasonInvalid  = "Invalid"
	reasonNameUsed = "NameInUse"
)

// discoveryRetry is how often the provider looks again for the
// AddressPool resource when it is not served yet (the addons chart that
// installs its CRD comes after the control plane).
const discoveryRetry = 10 * time.Second

// poolWatcher keeps the allocator's pools the union of the file's and the
// AddressPool objects', and writes the objects' status.
type poolWatcher struct {
	alloc *allocator.Allocator

	mu        sync.Mutex
	filePools []api.Pool
	objects   []*lbv1alpha1.AddressPool
	verdicts  map[string]metav1.Condition // AddressPool name → Valid

	served   chan struct{} // closed once the resource's presence is known
	informer cache.SharedIndexInformer
	client   dynamic.Interface
	kick     chan struct{}
}

func newPoolWatcher(alloc *allocator.Allocator) *poolWatcher {
	return &poolWatcher{alloc: alloc, served: make(chan struct{}), kick: make(chan struct{}, 1), verdicts: map[string]metav1.Condition{}}
}

func (w *poolWatcher) setFilePools(pools []api.Pool) {
	w.mu.Lock()
	w.filePools = pools
	w.mu.Unlock()
	w.recompute()
}

// synced reports whether the AddressPools are known: the resource is not
// served, or its informer has synced.
func (w *poolWatcher) synced() bool {
	select {
	case <-w.served:
	default:
		return false
	}
	w.mu.Lock()
	inf := w.informer
	w.mu.Unlock()
	return inf == nil || inf.HasSynced()
}

// start looks for the AddressPool resource and, once it is served, watches
// it; it also runs the status writer.
func (w *poolWatcher) start(cfg *rest.Config, stop <-chan struct{}) {
	w.client = dynamic.NewForConfigOrDie(cfg)
	disc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	ctx := wait.ContextForChannel(stop)
	go func() {
		first := true
		_ = wait.PollUntilContextCancel(ctx, discoveryRetry, true, func(ctx context.Context) (bool, error) {
			ok, err := served(disc)
			if err != nil {
				klog.ErrorS(err, "Looking for the AddressPool resource")
				return false, nil
			}
			if first {
				// Known either way: allocation need not wait for a CRD
				// that is not installed.
				first = false
				close(w.served)
			}
			if ok {
				w.watch(stop)
			}
			return ok, nil
		})
	}()
	go w.writeStatus(ctx)
}

// served reports whether the apiserver serves AddressPools.
func served(disc discovery.DiscoveryInterface) (bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(lbv1alpha1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == lbv1alpha1.ResourceAddressPool {
			return true, nil
		}
	}
	return false, nil
}

func (w *poolWatcher) watch(stop <-chan struct{}) {
	inf := dynamicinformer.NewFilteredDynamicInformer(w.client, lbv1alpha1.AddressPoolResource, "", 0, cache.Indexers{}, nil).Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.fromInformer(inf) },
		UpdateFunc: func(_, _ any) { w.fromInformer(inf) },
		DeleteFunc: func(any) { w.fromInformer(inf) },
	})
	w.mu.Lock()
	w.informer = inf
	w.mu.Unlock()
	klog.InfoS("Watching AddressPools")
	go inf.Run(stop)
}

// fromInformer re-reads every AddressPool from the cache.
func (w *poolWatcher) fromInformer(inf cache.SharedIndexInformer) {
	var objs []*lbv1alpha1.AddressPool
	for _, o := range inf.GetStore().List() {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		p := &lbv1alpha1.AddressPool{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
			klog.ErrorS(err, "Reading AddressPool", "pool", u.GetName())
			continue
		}
		objs = append(objs, p)
	}
	w.mu.Lock()
	w.objects = objs
	w.mu.Unlock()
	w.recompute()
}

// recompute builds the allocator's pools: the file's, in their order,
// then the AddressPools by age. An AddressPool that is invalid, reuses a
// name or overlaps a pool before it is left out, and says why in its
// Valid condition.
func (w *poolWatcher) recompute() {
	w.mu.Lock()
	files := slices.Clone(w.filePools)
	objs := slices.Clone(w.objects)
	w.mu.Unlock()
	slices.SortFunc(objs, func(a, b *lbv1alpha1.AddressPool) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var pools []allocator.Pool
	owner := map[string]string{} // pool name → where it comes from
	for _, fp := range files {
		p, err := allocator.PoolFromSpec(fp.Name, &fp.AddressPoolSpec)
		if err != nil {
			continue // validated with the file; cannot happen
		}
		pools = append(pools, p)
		owner[fp.Name] = "the cloud config"
	}
	verdicts := map[string]metav1.Condition{}
	for _, o := range objs {
		cond := metav1.Condition{Type: conditionValid, Status: metav1.ConditionTrue, Reason: reasonAccepted, ObservedGeneration: o.Generation}
		p, err := allocator.PoolFromSpec(o.Name, &o.Spec)
		errs := lbv1alpha1.ValidateAddressPoolSpec(&o.Spec, field.NewPath("spec"))
		switch {
		case len(errs) > 0 || err != nil:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonInvalid, fmt.Sprint(errs.ToAggregate(), err)
		case owner[o.Name] != "":
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonNameUsed, fmt.Sprintf("a pool of %s has this name", owner[o.Name])
		default:
			if other, r := overlapping(p, pools); other != "" {
				cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonOverlap, fmt.Sprintf("%s overlaps pool %q", r, other)
			}
		}
		verdicts[o.Name] = cond
		if cond.Status == metav1.ConditionTrue {
			pools = append(pools, p)
			owner[o.Name] = "an AddressPool"
		}
	}
	w.alloc.SetPools(pools)
	w.mu.Lock()
	w.verdicts = verdicts
	w.mu.Unlock()
	w.changed()
}

// overlapping returns a pool of pools that shares an address with p, and
// p's range that does.
func overlapping(p allocator.Pool, pools []allocator.Pool) (string, string) {
	for _, q := range pools {
		for _, r := range p.Ranges {
			for _, s := range q.Ranges {
				if r.Overlaps(s) {
					return q.Name, r.String()
				}
			}
		}
	}
	return "", ""
}

// changed asks the status writer to look at the pools' usage again.
func (w *poolWatcher) changed() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// writeStatus writes the AddressPools' usage and Valid condition when they
// differ from what the objects say: at every change, batched, and every
// minute in case a write failed.
func (w *poolWatcher) writeStatus(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-t.C:
		}
		w.mu.Lock()
		objs := slices.Clone(w.objects)
		verdicts := w.verdicts
		w.mu.Unlock()
		for _, o := range objs {
			if err := w.writeOne(ctx, o, verdicts[o.Name]); err != nil {
				klog.ErrorS(err, "Writing AddressPool status", "pool", o.Name)
			}
		}
	}
}

func (w *poolWatcher) writeOne(ctx context.Context, o *lbv1alpha1.AddressPool, valid metav1.Condition) error {
	u := w.alloc.Usage(o.Name)
	st := *o.Status.DeepCopy()
	st.AssignedIPv4, st.AssignedIPv6, st.AvailableIPv4, st.AvailableIPv6 = u.AssignedIPv4, u.AssignedIPv6, u.AvailableIPv4, u.AvailableIPv6
	if valid.Type != "" {
		meta.SetStatusCondition(&st.Conditions, valid)
	}
	if reflect.DeepEqual(st, o.Status) {
		return nil
	}
	next := o.DeepCopy()
	next.Status = st
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(next)
	if err != nil {
		return err
	}
	u2 := &unstructured.Unstructured{Object: obj}
	u2.SetAPIVersion(lbv1alpha1.SchemeGroupVersion.String())
	u2.SetKind(lbv1alpha1.KindAddressPool)
	_, err = w.client.Resource(lbv1alpha1.AddressPoolResource).UpdateStatus(ctx, u2, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// The informer brings the newer object, and with it another try.
		return nil
	}
	return err
}
