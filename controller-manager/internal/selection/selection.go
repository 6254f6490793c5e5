// Package selection answers, through informer indexes, the two questions
// the endpoint controllers ask on every pod event and every sync — which
// pods does this Service select, which Services select this pod — without
// scanning every pod or Service of the namespace each time, as a plain
// lister does.
package selection

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	esutil "k8s.io/endpointslice/util"
)

// Index names, shared by every controller using the same informers.
const (
	podLabelIndex        = "trireme.dev/pod-label"
	serviceSelectorIndex = "trireme.dev/service-selector"
	sliceServiceIndex    = "trireme.dev/endpointslice-service"
)

// anySelector is the index value of Services whose selector is empty but
// not nil: an empty set selects every pod.
const anySelector = "\x00any"

// Index finds pods by Service selector and Services by pod labels. It is
// safe for concurrent use.
type Index struct {
	pods     cache.Indexer
	services cache.Indexer
	slices   cache.Indexer
}

// New adds the indexes it needs to the pod and Service informers (and the
// EndpointSlice informer, if given) unless an earlier caller did, and
// returns an Index over them. Call it before the informers start.
func New(pods, services, slices cache.SharedIndexInformer) (*Index, error) {
	x := &Index{pods: pods.GetIndexer(), services: services.GetIndexer()}
	if err := addIndex(pods, podLabelIndex, podLabelValues); err != nil {
		return nil, err
	}
	if err := addIndex(services, serviceSelectorIndex, serviceSelectorValues); err != nil {
		return nil, err
	}
	if slices != nil {
		if err := addIndex(slices, sliceServiceIndex, sliceServiceValues); err != nil {
			return nil, err
		}
		x.slices = slices.GetIndexer()
	}
	return x, nil
}

func addIndex(inf cache.SharedIndexInformer, name string, f cache.IndexFunc) error {
	if _, ok := inf.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	if err := inf.AddIndexers(cache.Indexers{name: f}); err != nil {
		return fmt.Errorf("add index %s: %w", name, err)
	}
	return nil
}

func pair(ns, k, v string) string { return ns + "/" + k + "=" + v }

func podLabelValues(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	out := make([]string, 0, len(pod.Labels))
	for k, v := range pod.Labels {
		out = append(out, pair(pod.Namespace, k, v))
	}
	return out, nil
}

func serviceSelectorValues(obj any) ([]string, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok || svc.Spec.Selector == nil {
		// A nil selector selects nothing.
		return nil, nil
	}
	if len(svc.Spec.Selector) == 0 {
		return []string{svc.Namespace + "/" + anySelector}, nil
	}
	// One pair is enough to find the Service from any pod it selects: such
	// a pod carries every pair. The smallest key keeps it deterministic.
	var k string
	for key := range svc.Spec.Selector {
		if k == "" || key < k {
			k = key
		}
	}
	return []string{pair(svc.Namespace, k, svc.Spec.Selector[k])}, nil
}

func sliceServiceValues(obj any) ([]string, error) {
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	name, ok := slice.Labels[discoveryv1.LabelServiceName]
	if !ok {
		return nil, nil
	}
	return []string{slice.Namespace + "/" + name}, nil
}

// Pods returns the pods of namespace ns whose labels match selector, a
// Service selector; an empty selector matches every pod.
func (x *Index) Pods(ns string, selector map[string]string) ([]*corev1.Pod, error) {
	var candidates []any
	if len(selector) == 0 {
		var err error
		if candidates, err = x.pods.ByIndex(cache.NamespaceIndex, ns); err != nil {
			return nil, fmt.Errorf("pods of namespace %s: %w", ns, err)
		}
	} else {
		// Start from the selector pair fewest pods carry.
		best := -1
		var bestKey string
		for k, v := range selector {
			keys, err := x.pods.IndexKeys(podLabelIndex, pair(ns, k, v))
			if err != nil {
				return nil, fmt.Errorf("pods labelled %s=%s: %w", k, v, err)
			}
			if best < 0 || len(keys) < best {
				best, bestKey = len(keys), pair(ns, k, v)
			}
			if best == 0 {
				return nil, nil
			}
		}
		var err error
		if candidates, err = x.pods.ByIndex(podLabelIndex, bestKey); err != nil {
			return nil, fmt.Errorf("pods by %s: %w", bestKey, err)
		}
	}
	sel := labels.SelectorFromValidatedSet(selector)
	out := make([]*corev1.Pod, 0, len(candidates))
	for _, obj := range candidates {
		if pod, ok := obj.(*corev1.Pod); ok && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, pod)
		}
	}
	return out, nil
}

// Services returns the keys (namespace/name) of the Services of namespace
// ns whose selector matches podLabels.
func (x *Index) Services(ns string, podLabels labels.Set) (sets.Set[string], error) {
	out := sets.New[string]()
	check := func(value string) error {
		objs, err := x.services.ByIndex(serviceSelectorIndex, value)
		if err != nil {
			return fmt.Errorf("services by %s: %w", value, err)
		}
		for _, obj := range objs {
			svc, ok := obj.(*corev1.Service)
			if ok && labels.ValidatedSetSelector(svc.Spec.Selector).Matches(podLabels) {
				out.Insert(svc.Namespace + "/" + svc.Name)
			}
		}
		return nil
	}
	if err := check(ns + "/" + anySelector); err != nil {
		return nil, err
	}
	for k, v := range podLabels {
		if err := check(pair(ns, k, v)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ServicesToUpdate returns the keys of the Services whose endpoints a pod
// event may change, as upstream's esutil.GetServicesToUpdate decides, from
// the indexes.
func (x *Index) ServicesToUpdate(key *esutil.PodProjectionKey) (sets.Set[string], error) {
	if key == nil {
		return nil, nil
	}
	services, err := x.Services(key.Namespace, key.Labels)
	if err != nil || key.OldLabels == nil {
		return services, err
	}
	old, err := x.Services(key.Namespace, key.OldLabels)
	if err != nil {
		return nil, err
	}
	if key.PodChanged {
		return services.Union(old), nil
	}
	// Only the labels changed: the Services that gained or lost the pod.
	return services.Difference(old).Union(old.Difference(services)), nil
}

// Slices returns the EndpointSlices of namespace ns labelled with Service
// name; New must have been given the EndpointSlice informer.
func (x *Index) Slices(ns, name string) ([]*discoveryv1.EndpointSlice, error) {
	objs, err := x.slices.ByIndex(sliceServiceIndex, ns+"/"+name)
	if err != nil {
		return nil, fmt.Errorf("endpointslices of service %s/%s: %w", ns, name, err)
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, obj := range objs {
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
			out = append(out, s)
		}
	}
	return out, nil
}
