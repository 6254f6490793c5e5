package limitranger

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/cache"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// annotation records on a pod which defaults the plugin set.
const annotation = "kubernetes.io/limit-ranger"

// liveTTL is how long a live lookup of a namespace's LimitRanges stands
// in for the informer's empty answer. Most namespaces have none, and
// without it every pod created in one would list them twice (admit and
// validate) from storage. A LimitRange the informer has seen is used at
// once; the lookup only covers the informer's lag behind a new one.
const liveTTL = 30 * time.Second

// Plugin applies LimitRanges.
type Plugin struct {
	*admission.Handler
	client kubernetes.Interface
	lister corelisters.LimitRangeLister
	// live holds, per namespace, what a live lookup found when the
	// informer had nothing; lookups shares one lookup between the
	// requests that miss it together.
	live    *cache.LRUExpireCache
	lookups singleflight.Group
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

func newPlugin() *Plugin {
	return &Plugin{
		Handler: admission.NewHandler(admission.Create, admission.Update),
		live:    cache.NewLRUExpireCache(4096),
	}
}

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Core().V1().LimitRanges()
	p.lister = inf.Lister()
	p.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil || p.client == nil {
		return errors.New("LimitRanger needs a client and an informer factory")
	}
	return nil
}

// applies reports whether a request is one LimitRanger looks at: pods on
// create (their resources cannot change later except through resize,
// which has its own checks) and claims on create and update.
func applies(a admission.Attributes) bool {
	if a.GetSubresource() != "" {
		return false
	}
	switch a.GetResource().GroupResource() {
	case corev1.Resource("pods"):
		return a.GetOperation() == admission.Create
	case corev1.Resource("persistentvolumeclaims"):
		return true
	}
	return false
}

func (p *Plugin) ranges(ctx context.Context, a admission.Attributes) ([]*corev1.LimitRange, error) {
	if !p.WaitForReady() {
		return nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	items, err := p.lister.LimitRanges(a.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.GetOperation(), a.GetResource()))
	}
	if len(items) > 0 {
		return items, nil
	}
	// A LimitRange created a moment ago may not be in the informer yet.
	ns := a.GetNamespace()
	if found, ok := p.live.Get(ns); ok {
		return found.([]*corev1.LimitRange), nil
	}
	found, err, _ := p.lookups.Do(ns, func() (any, error) {
		// Not the request's context: the lookup is shared, and one
		// caller giving up must not fail the others.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		list, err := p.client.CoreV1().LimitRanges(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		found := make([]*corev1.LimitRange, 0, len(list.Items))
		for i := range list.Items {
			found = append(found, &list.Items[i])
		}
		p.live.Add(ns, found, liveTTL)
		return found, nil
	})
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("list limit ranges of namespace %s: %w", ns, err))
	}
	return found.([]*corev1.LimitRange), nil
}

// Admit implements admission.MutationInterface: fills default requests and
// limits into a new pod's containers.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if !applies(a) {
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return nil
	}
	ranges, err := p.ranges(ctx, a)
	if err != nil {
		return err
	}
	for _, lr := range ranges {
		applyDefaults(pod, lr)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if !applies(a) {
		return nil
	}
	ranges, err := p.ranges(ctx, a)
	if err != nil {
		return err
	}
	var errs []error
	for _, lr := range ranges {
		switch obj := a.GetObject().(type) {
		case *corev1.Pod:
			errs = append(errs, validatePod(lr, obj)...)
		case *corev1.PersistentVolumeClaim:
			errs = append(errs, validateClaim(lr, obj)...)
		}
	}
	if len(errs) > 0 {
		return admission.NewForbidden(a, utilerrors.NewAggregate(errs))
	}
	return nil
}

// defaults collects the default limits and requests of a range's
// Container items.
func defaults(lr *corev1.LimitRange) (limits, requests corev1.ResourceList) {
	limits, requests = corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.Default {
			limits[k] = v
		}
		for k, v := range item.DefaultRequest {
			requests[k] = v
		}
	}
	return limits, requests
}

// applyDefaults sets each missing container limit from the range's
// default and each missing request from its defaultRequest (or, without
// one, from the limit), and notes what it set in the pod's annotation.
func applyDefaults(pod *corev1.Pod, lr *corev1.LimitRange) {
	limits, requests := defaults(lr)
	if len(limits) == 0 && len(requests) == 0 {
		return
	}
	var notes []string
	fill := func(c *corev1.Container, what string) {
		var setRequests, setLimits []string
		for name, q := range limits {
			if _, ok := c.Resources.Limits[name]; !ok {
				if c.Resources.Limits == nil {
					c.Resources.Limits = corev1.ResourceList{}
				}
				c.Resources.Limits[name] = q.DeepCopy()
				setLimits = append(setLimits, string(name))
			}
		}
		for name, q := range requests {
			if _, ok := c.Resources.Requests[name]; !ok {
				if c.Resources.Requests == nil {
					c.Resources.Requests = corev1.ResourceList{}
				}
				// A container with its own limit below the default request
				// gets its limit as request, which is always valid.
				if l, ok := c.Resources.Limits[name]; ok && l.Cmp(q) < 0 {
					q = l
				}
				c.Resources.Requests[name] = q.DeepCopy()
				setRequests = append(setRequests, string(name))
			}
		}
		// Upstream's wording: "cpu, memory request for container app".
		if len(setRequests) > 0 {
			sort.Strings(setRequests)
			notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(setRequests, ", "), what, c.Name))
		}
		if len(setLimits) > 0 {
			sort.Strings(setLimits)
			notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(setLimits, ", "), what, c.Name))
		}
	}
	for i := range pod.Spec.InitContainers {
		fill(&pod.Spec.InitContainers[i], "init container")
	}
	for i := range pod.Spec.Containers {
		fill(&pod.Spec.Containers[i], "container")
	}
	if len(notes) == 0 {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
}

// bounds checks one observed request and limit against an item's min, max
// and ratio for one resource.
func bounds(kind corev1.LimitType, name corev1.ResourceName, item *corev1.LimitRangeItem, req, lim *resource.Quantity) []error {
	var errs []error
	if min, ok := item.Min[name]; ok {
		switch {
		case req == nil:
			errs = append(errs, fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, kind, min.String()))
		case req.Cmp(min) < 0:
			errs = append(errs, fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, kind, min.String(), req.String()))
		}
		if lim != nil && lim.Cmp(min) < 0 {
			errs = append(errs, fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, kind, min.String(), lim.String()))
		}
	}
	if max, ok := item.Max[name]; ok {
		switch {
		case lim == nil:
			errs = append(errs, fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, kind, max.String()))
		case lim.Cmp(max) > 0:
			errs = append(errs, fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, kind, max.String(), lim.String()))
		}
		if req != nil && req.Cmp(max) > 0 {
			errs = append(errs, fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, max.String(), req.String()))
		}
	}
	if ratio, ok := item.MaxLimitRequestRatio[name]; ok {
		if req == nil || req.IsZero() {
			errs = append(errs, fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, kind, ratio.String()))
		} else if lim != nil {
			observed := float64(lim.MilliValue()) / float64(req.MilliValue())
			if observed > float64(ratio.MilliValue())/1000 {
				errs = append(errs, fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, kind, ratio.String(), observed))
			}
		}
	}
	return errs
}

func lookup(l corev1.ResourceList, name corev1.ResourceName) *resource.Quantity {
	if q, ok := l[name]; ok {
		return &q
	}
	return nil
}

// itemResources are the resource names an item constrains.
func itemResources(item *corev1.LimitRangeItem) []corev1.ResourceName {
	seen := map[corev1.ResourceName]bool{}
	var out []corev1.ResourceName
	for _, l := range []corev1.ResourceList{item.Min, item.Max, item.MaxLimitRequestRatio} {
		for n := range l {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func validatePod(lr *corev1.LimitRange, pod *corev1.Pod) []error {
	var errs []error
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		switch item.Type {
		case corev1.LimitTypeContainer:
			all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
			for _, c := range all {
				for _, name := range itemResources(item) {
					errs = append(errs, bounds(item.Type, name, item, lookup(c.Resources.Requests, name), lookup(c.Resources.Limits, name))...)
				}
			}
		case corev1.LimitTypePod:
			req, lim := podTotals(pod)
			for _, name := range itemResources(item) {
				errs = append(errs, bounds(item.Type, name, item, lookup(req, name), lookup(lim, name))...)
			}
		}
	}
	return errs
}

// podTotals sums the containers' requests and limits; an init container
// runs alone, so it counts only when it alone asks for more. A resource
// counts as limited only when every container limits it.
func podTotals(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	requests, limits = corev1.ResourceList{}, corev1.ResourceList{}
	unlimited := map[corev1.ResourceName]bool{}
	for _, c := range pod.Spec.Containers {
		add(requests, c.Resources.Requests)
		add(limits, c.Resources.Limits)
		for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			if _, ok := c.Resources.Limits[n]; !ok {
				unlimited[n] = true
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		raise(requests, c.Resources.Requests)
		raise(limits, c.Resources.Limits)
	}
	for n := range unlimited {
		delete(limits, n)
	}
	return requests, limits
}

func add(dst, src corev1.ResourceList) {
	for n, q := range src {
		sum := dst[n]
		sum.Add(q)
		dst[n] = sum
	}
}

func raise(dst, src corev1.ResourceList) {
	for n, q := range src {
		if cur, ok := dst[n]; !ok || q.Cmp(cur) > 0 {
			dst[n] = q.DeepCopy()
		}
	}
}

func validateClaim(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) []error {
	var errs []error
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		for _, name := range itemResources(item) {
			req := lookup(pvc.Spec.Resources.Requests, name)
			if _, ok := item.Min[name]; ok && req == nil {
				errs = append(errs, fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, item.Type, item.Min.Name(name, resource.DecimalSI).String()))
				continue
			}
			if req == nil {
				continue
			}
			if min, ok := item.Min[name]; ok && req.Cmp(min) < 0 {
				errs = append(errs, fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, item.Type, min.String(), req.String()))
			}
			if max, ok := item.Max[name]; ok && req.Cmp(max) > 0 {
				errs = append(errs, fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, item.Type, max.String(), req.String()))
			}
		}
	}
	return errs
}
