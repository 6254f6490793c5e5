package proxy

import (
	"context"
	"errors"
	"net"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// objects is a rest.Getter over a fixed set of objects of one resource.
type objects struct {
	resource string
	byName   map[string]runtime.Object
}

func newObjects(resource string, objs ...runtime.Object) *objects {
	o := &objects{resource: resource, byName: map[string]runtime.Object{}}
	for _, obj := range objs {
		o.byName[obj.(metav1.Object).GetName()] = obj
	}
	return o
}

func (o *objects) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	obj, ok := o.byName[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource(o.resource), name)
	}
	return obj, nil
}

// sliceList is a rest.Lister of EndpointSlices that honours label selectors.
type sliceList struct {
	rest.TableConvertor
	items []discoveryv1.EndpointSlice
}

func (s *sliceList) NewList() runtime.Object { return &discoveryv1.EndpointSliceList{} }

func (s *sliceList) List(_ context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	sel := labels.Everything()
	if opts != nil && opts.LabelSelector != nil {
		sel = opts.LabelSelector
	}
	out := &discoveryv1.EndpointSliceList{}
	for _, it := range s.items {
		if sel.Matches(labels.Set(it.Labels)) {
			out.Items = append(out.Items, *it.DeepCopy())
		}
	}
	return out, nil
}

// hosts is a Resolver over a fixed table.
type hosts map[string][]string

func (h hosts) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := h[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, ip := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(ip)})
	}
	return out, nil
}

// statusCode is the HTTP code of an API error, 0 for nil and -1 for an
// error that is not an API status.
func statusCode(err error) int32 {
	if err == nil {
		return 0
	}
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return -1
	}
	return s.Status().Code
}

func pod(name, ip string, ports ...corev1.ContainerPort) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Ports: ports}}},
	}
	if ip != "" {
		p.Status.PodIP = ip
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	return p
}
