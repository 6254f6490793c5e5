// Package endpointslicemirroring is the controller that mirrors the
// Endpoints of Services without a selector, which their users write by
// hand, into EndpointSlices, so that consumers of slices (the proxy, DNS)
// see them too.
package endpointslicemirroring

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "endpointslicemirroring"

// ManagedBy is the managed-by label value of mirrored slices.
const ManagedBy = "endpointslicemirroring-controller.k8s.io"

const (
	// DefaultMaxEndpointsPerSubset is upstream's
	// --mirroring-max-endpoints-per-subset: addresses beyond it in one
	// subset are not mirrored.
	DefaultMaxEndpointsPerSubset = 1000
	// maxEndpointsPerSlice caps one mirrored slice, as the EndpointSlice
	// controller's default does.
	maxEndpointsPerSlice = 100
)

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes the mirrored EndpointSlices.
	Client kubernetes.Interface
	// Services, Endpoints and Slices are the shared informers; New
	// registers its handlers on all three.
	Services  coreinformers.ServiceInformer
	Endpoints coreinformers.EndpointsInformer
	Slices    discoveryinformers.EndpointSliceInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// MaxEndpointsPerSubset is --mirroring-max-endpoints-per-subset; 0
	// means DefaultMaxEndpointsPerSubset (1000).
	MaxEndpointsPerSubset int
}

// Controller mirrors Endpoints to EndpointSlices; its queue holds
// Endpoints (= Service) keys.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	services  corelisters.ServiceLister
	endpoints corelisters.EndpointsLister
	slices    discoverylisters.EndpointSliceLister
	synced    []cache.InformerSynced
	maxSubset int
	loop      *worker.Loop
}

// New returns the controller with its event handlers registered.
func New(o Options) (*Controller, error) {
	if o.MaxEndpointsPerSubset <= 0 {
		o.MaxEndpointsPerSubset = DefaultMaxEndpointsPerSubset
	}
	c := &Controller{
		client:    o.Client,
		recorder:  o.Recorder,
		services:  o.Services.Lister(),
		endpoints: o.Endpoints.Lister(),
		slices:    o.Slices.Lister(),
		maxSubset: o.MaxEndpointsPerSubset,
		synced: []cache.InformerSynced{o.Services.Informer().HasSynced, o.Endpoints.Informer().HasSynced,
			o.Slices.Informer().HasSynced},
	}
	c.loop = worker.New(Name, c.sync)
	all := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}
	if _, err := o.Services.Informer().AddEventHandler(all); err != nil {
		return nil, fmt.Errorf("watch services: %w", err)
	}
	// Endpoints that ask not to be mirrored (every Endpoints the endpoint
	// controller writes) are no concern of this controller unless they
	// just stopped or started asking, as upstream filters them.
	queueMirrored := func(objs ...any) {
		for _, obj := range objs {
			if ep, ok := worker.ObjectAs[*corev1.Endpoints](obj); ok && ep.Labels[discoveryv1.LabelSkipMirror] != "true" {
				c.loop.AddObject(objs[len(objs)-1])
				return
			}
		}
	}
	if _, err := o.Endpoints.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { queueMirrored(obj) },
		UpdateFunc: func(old, obj any) { queueMirrored(old, obj) },
		DeleteFunc: func(obj any) { queueMirrored(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch endpoints: %w", err)
	}
	slice := func(obj any) {
		s, ok := worker.ObjectAs[*discoveryv1.EndpointSlice](obj)
		if !ok || s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels[discoveryv1.LabelServiceName] == "" {
			return
		}
		c.loop.Add(s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName])
	}
	if _, err := o.Slices.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    slice,
		UpdateFunc: func(_, obj any) { slice(obj) },
		DeleteFunc: slice,
	}); err != nil {
		return nil, fmt.Errorf("watch endpointslices: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	sel := labels.Set{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ManagedBy}.AsSelectorPreValidated()
	existing, err := c.slices.EndpointSlices(ns).List(sel)
	if err != nil {
		return fmt.Errorf("list mirrored slices of %s: %w", key, err)
	}
	ep, err := c.endpoints.Endpoints(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get endpoints %s: %w", key, err)
	}
	svc, svcErr := c.services.Services(ns).Get(name)
	if svcErr != nil && !apierrors.IsNotFound(svcErr) {
		return fmt.Errorf("get service %s: %w", key, svcErr)
	}
	// Mirror only a selector-less Service's Endpoints that do not ask to
	// be skipped; anything else loses its mirrored slices.
	mirror := err == nil && svcErr == nil && svc.Spec.Selector == nil &&
		ep.Labels[discoveryv1.LabelSkipMirror] != "true"
	var want []*discoveryv1.EndpointSlice
	if mirror {
		var truncated bool
		want, truncated = Desired(ep, c.maxSubset)
		if truncated {
			c.recorder.Eventf(ep, corev1.EventTypeWarning, "EndpointsTruncated",
				"Endpoints %s has a subset over %d addresses; the rest are not mirrored", key, c.maxSubset)
		}
	}
	return c.apply(ctx, ep, existing, want)
}

// apply turns existing into want: slices are matched by their address
// type and port set, updated where they differ, created or deleted.
func (c *Controller) apply(ctx context.Context, ep *corev1.Endpoints, existing, want []*discoveryv1.EndpointSlice) error {
	byGroup := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		if s.DeletionTimestamp == nil {
			g := groupKey(s.AddressType, s.Ports)
			byGroup[g] = append(byGroup[g], s)
		}
	}
	for _, g := range byGroup {
		slices.SortFunc(g, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	}
	var errs []error
	api := c.client.DiscoveryV1().EndpointSlices
	for _, w := range want {
		g := groupKey(w.AddressType, w.Ports)
		if cur := byGroup[g]; len(cur) > 0 {
			byGroup[g] = cur[1:]
			if apiequality.Semantic.DeepEqual(cur[0].Endpoints, w.Endpoints) &&
				maps.Equal(cur[0].Labels, w.Labels) && maps.Equal(cur[0].Annotations, w.Annotations) &&
				apiequality.Semantic.DeepEqual(cur[0].OwnerReferences, w.OwnerReferences) {
				continue
			}
			upd := cur[0].DeepCopy()
			upd.Endpoints, upd.Labels, upd.Annotations, upd.OwnerReferences = w.Endpoints, w.Labels, w.Annotations, w.OwnerReferences
			if _, err := api(upd.Namespace).Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
				errs = append(errs, fmt.Errorf("update endpointslice %s/%s: %w", upd.Namespace, upd.Name, err))
			}
			continue
		}
		if _, err := api(w.Namespace).Create(ctx, w, metav1.CreateOptions{}); err != nil &&
			!apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.recorder.Eventf(ep, corev1.EventTypeWarning, "FailedToCreateEndpointSlice", "Error creating EndpointSlice: %v", err)
			errs = append(errs, fmt.Errorf("create endpointslice for %s/%s: %w", w.Namespace, w.Labels[discoveryv1.LabelServiceName], err))
		}
	}
	for _, rest := range byGroup {
		for _, s := range rest {
			if err := api(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

func groupKey(t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	var b strings.Builder
	b.WriteString(string(t))
	for _, p := range ports {
		b.WriteString("|" + deref(p.Name) + "/" + string(derefProto(p.Protocol)) + "/" + strconv.Itoa(int(derefInt(p.Port))))
	}
	return b.String()
}

// Desired returns the slices mirroring ep: one group a subset and address
// type, at most 100 endpoints a slice, at most maxPerSubset addresses a
// subset (reporting whether any were cut). Invalid IPs are skipped.
func Desired(ep *corev1.Endpoints, maxPerSubset int) ([]*discoveryv1.EndpointSlice, bool) {
	truncated := false
	type group struct {
		t         discoveryv1.AddressType
		ports     []discoveryv1.EndpointPort
		endpoints []discoveryv1.Endpoint
	}
	groups := map[string]*group{}
	var order []string
	for _, subset := range ep.Subsets {
		ports := make([]discoveryv1.EndpointPort, 0, len(subset.Ports))
		for _, p := range subset.Ports {
			ports = append(ports, discoveryv1.EndpointPort{
				Name: ptrTo(p.Name), Port: ptrTo(p.Port), Protocol: ptrTo(p.Protocol), AppProtocol: p.AppProtocol,
			})
		}
		slices.SortFunc(ports, func(a, b discoveryv1.EndpointPort) int {
			return strings.Compare(groupKey("", []discoveryv1.EndpointPort{a}), groupKey("", []discoveryv1.EndpointPort{b}))
		})
		n := 0
		add := func(addrs []corev1.EndpointAddress, ready bool) {
			for _, a := range addrs {
				if n >= maxPerSubset {
					truncated = true
					return
				}
				ip := net.ParseIP(a.IP)
				if ip == nil {
					continue
				}
				n++
				t := discoveryv1.AddressTypeIPv4
				if ip.To4() == nil {
					t = discoveryv1.AddressTypeIPv6
				}
				g := groupKey(t, ports)
				if groups[g] == nil {
					groups[g] = &group{t: t, ports: ports}
					order = append(order, g)
				}
				e := discoveryv1.Endpoint{
					Addresses:  []string{a.IP},
					Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(ready)},
					TargetRef:  a.TargetRef,
					NodeName:   a.NodeName,
				}
				if a.Hostname != "" {
					e.Hostname = ptrTo(a.Hostname)
				}
				groups[g].endpoints = append(groups[g].endpoints, e)
			}
		}
		add(subset.Addresses, true)
		add(subset.NotReadyAddresses, false)
	}
	sliceLabels := map[string]string{}
	for k, v := range ep.Labels {
		sliceLabels[k] = v
	}
	sliceLabels[discoveryv1.LabelServiceName] = ep.Name
	sliceLabels[discoveryv1.LabelManagedBy] = ManagedBy
	annotations := map[string]string{}
	for k, v := range ep.Annotations {
		if k != corev1.LastAppliedConfigAnnotation && k != corev1.EndpointsLastChangeTriggerTime {
			annotations[k] = v
		}
	}
	owner := metav1.NewControllerRef(ep, corev1.SchemeGroupVersion.WithKind("Endpoints"))
	var out []*discoveryv1.EndpointSlice
	for _, key := range order {
		g := groups[key]
		for start := 0; start < len(g.endpoints); start += maxEndpointsPerSlice {
			end := min(start+maxEndpointsPerSlice, len(g.endpoints))
			out = append(out, &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{
					GenerateName:    ep.Name + "-",
					Namespace:       ep.Namespace,
					Labels:          maps.Clone(sliceLabels),
					Annotations:     maps.Clone(annotations),
					OwnerReferences: []metav1.OwnerReference{*owner},
				},
				AddressType: g.t,
				Ports:       g.ports,
				Endpoints:   g.endpoints[start:end],
			})
		}
	}
	return out, truncated
}

func ptrTo[T any](v T) *T { return &v }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefProto(p *corev1.Protocol) corev1.Protocol {
	if p == nil {
		return ""
	}
	return *p
}

func derefInt(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
