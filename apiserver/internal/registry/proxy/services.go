package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	genericproxy "k8s.io/apiserver/pkg/util/proxy"
)

// NewServiceStore returns the services/proxy subresource: requests go to a
// random ready endpoint of the service, found in its EndpointSlices, at the
// endpoint port matching the service port the id names (by name or
// number), through transport. Only endpoints that are the current address
// of a pod in the service's namespace qualify, as upstream requires, so an
// EndpointSlice cannot point the apiserver at an arbitrary address.
func NewServiceStore(services, pods rest.Getter, endpointSlices rest.Lister, transport http.RoundTripper) *Store {
	r := &serviceLocator{services: services, pods: pods, slices: endpointSlices}
	return &Store{
		newOptions: func() runtime.Object { return &corev1.ServiceProxyOptions{} },
		locate: func(ctx context.Context, id string) (target, error) {
			u, err := r.locate(ctx, id)
			return target{URL: u, Transport: transport}, err
		},
	}
}

type serviceLocator struct {
	services, pods rest.Getter
	slices         rest.Lister
}

func (r *serviceLocator) locate(ctx context.Context, id string) (*url.URL, error) {
	oid, err := parseID("service", id)
	if err != nil {
		return nil, err
	}
	obj, err := r.services.Get(ctx, oid.Name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("service storage returned %T", obj))
	}
	portName, err := servicePortName(svc, oid.Port)
	if err != nil {
		return nil, err
	}
	eps, err := r.endpointSlices(ctx, svc.Name)
	if err != nil {
		return nil, err
	}
	family := corev1.IPFamilyUnknown
	if len(svc.Spec.IPFamilies) > 0 {
		family = svc.Spec.IPFamilies[0]
	}
	hp, err := genericproxy.RandomEndpoint(svc.Name, eps, portName, family, func(ep *discoveryv1.Endpoint) bool {
		return r.isPodAddress(ctx, svc.Namespace, ep)
	})
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: oid.Scheme, Host: hp}, nil
}

// servicePortName maps the id's port to the name of a service port: a
// number is looked up among the service's ports; a name (or nothing, for a
// service's single unnamed port) is taken as given.
func servicePortName(svc *corev1.Service, port string) (string, error) {
	n, numeric, err := portNumber(port)
	if !numeric {
		return port, nil
	}
	if err != nil {
		return "", err
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == n {
			return p.Name, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, svc.Name))
}

func (r *serviceLocator) endpointSlices(ctx context.Context, service string) ([]*discoveryv1.EndpointSlice, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})
	obj, err := r.slices.List(ctx, &metainternalversion.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*discoveryv1.EndpointSliceList)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("endpointslice storage returned %T", obj))
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// isPodAddress reports whether ep refers to a pod in namespace whose IPs
// include the endpoint's address.
func (r *serviceLocator) isPodAddress(ctx context.Context, namespace string, ep *discoveryv1.Endpoint) bool {
	ref := ep.TargetRef
	if ref == nil || ref.Namespace != namespace || (ref.Kind != "" && ref.Kind != "Pod") || len(ep.Addresses) == 0 {
		return false
	}
	obj, err := r.pods.Get(ctx, ref.Name, &metav1.GetOptions{})
	if err != nil {
		return false
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	if pod.Status.PodIP == ep.Addresses[0] {
		return true
	}
	return slices.ContainsFunc(pod.Status.PodIPs, func(ip corev1.PodIP) bool { return ip.IP == ep.Addresses[0] })
}
