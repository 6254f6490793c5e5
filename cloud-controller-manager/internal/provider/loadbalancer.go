package provider

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	cloudprovider "k8s.io/cloud-provider"
	servicehelper "k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	api "trireme.dev/api/config/cloudconfig"
	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
	"trireme.dev/cloud-controller-manager/internal/allocator"
)

// loadBalancer gives Services addresses from pools. The addresses are
// announced on the node network by the nodes (trireme-vip), not here: the
// provider's part is to hand them out once each.
type loadBalancer struct {
	c     *Cloud
	pools *poolWatcher

	services   corelisters.ServiceLister
	namespaces corelisters.NamespaceLister
	synced     []cache.InformerSynced

	ready chan struct{} // closed once the allocations are rebuilt
	stop  <-chan struct{}
}

var _ cloudprovider.LoadBalancer = (*loadBalancer)(nil)

func newLoadBalancer(c *Cloud) *loadBalancer {
	lb := &loadBalancer{c: c, ready: make(chan struct{})}
	lb.pools = newPoolWatcher(c.alloc)
	c.config.OnChange(func(cfg *api.CloudConfiguration) { lb.pools.setFilePools(cfg.LoadBalancer.Pools) })
	lb.pools.setFilePools(c.config.Current().LoadBalancer.Pools)
	return lb
}

func (lb *loadBalancer) initialize(cb cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	lb.stop = stop
	lb.pools.start(cb.ConfigOrDie(clientName), stop)
}

// SetInformers takes the Service and Namespace informers the controllers
// share; the allocations are rebuilt from the Services once they sync.
func (c *Cloud) SetInformers(f informers.SharedInformerFactory) {
	lb := c.lb
	svc := f.Core().V1().Services()
	ns := f.Core().V1().Namespaces()
	lb.services, lb.namespaces = svc.Lister(), ns.Lister()
	lb.synced = []cache.InformerSynced{svc.Informer().HasSynced, ns.Informer().HasSynced}
	go lb.restore()
}

// restore rebuilds the allocations from the Services' status, oldest
// Service first, before any address is handed out.
func (lb *loadBalancer) restore() {
	stop := lb.stop
	if stop == nil {
		stop = make(chan struct{})
	}
	if !cache.WaitForCacheSync(stop, append(lb.synced, lb.pools.synced)...) {
		return
	}
	svcs, err := lb.services.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Listing Services to rebuild LoadBalancer allocations")
		return
	}
	slices.SortFunc(svcs, func(a, b *corev1.Service) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	n := 0
	for _, svc := range svcs {
		if !ours(svc) {
			continue
		}
		var held []netip.Addr
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if ip, err := netip.ParseAddr(in.IP); err == nil {
				held = append(held, ip)
			}
		}
		if len(held) == 0 {
			continue
		}
		req, _ := lb.request(svc)
		if lost := lb.c.alloc.Restore(req, held); len(lost) > 0 {
			klog.InfoS("Two Services' status hold one address; the older keeps it", "service", klog.KObj(svc), "addresses", lost)
		}
		n++
	}
	klog.InfoS("Rebuilt LoadBalancer allocations from Services", "services", n)
	lb.pools.changed()
	close(lb.ready)
}

// ours reports whether the service controller hands svc to this
// provider: a LoadBalancer without a class, or one being cleaned up.
func ours(svc *corev1.Service) bool {
	return (svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil) ||
		servicehelper.HasLBFinalizer(svc)
}

// waitReady blocks until the allocations are rebuilt.
func (lb *loadBalancer) waitReady(ctx context.Context) error {
	select {
	case <-lb.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for LoadBalancer allocations to be rebuilt: %w", ctx.Err())
	}
}

// request describes what svc asks of the allocator; the error is about a
// spec the allocator cannot honour.
func (lb *loadBalancer) request(svc *corev1.Service) (allocator.Request, error) {
	r := allocator.Request{
		Key:        svc.Namespace + "/" + svc.Name,
		Namespace:  svc.Namespace,
		Labels:     svc.Labels,
		Pool:       svc.Annotations[lbv1alpha1.AnnotationAddressPool],
		SharingKey: svc.Annotations[lbv1alpha1.AnnotationAllowSharedIP],
		Families:   svc.Spec.IPFamilies,
		RequireAll: ptr.Deref(svc.Spec.IPFamilyPolicy, "") == corev1.IPFamilyPolicyRequireDualStack,
	}
	if len(r.Families) == 0 {
		r.Families = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if ptr.Deref(svc.Spec.IPFamilyPolicy, corev1.IPFamilyPolicySingleStack) == corev1.IPFamilyPolicySingleStack {
		r.Families = r.Families[:1]
	}
	if lb.namespaces != nil {
		if ns, err := lb.namespaces.Get(svc.Namespace); err == nil {
			r.NamespaceLabels = ns.Labels
		}
	}
	for _, p := range svc.Spec.Ports {
		r.Ports = append(r.Ports, allocator.Port{Protocol: p.Protocol, Port: p.Port})
	}
	if s := svc.Spec.LoadBalancerIP; s != "" {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return r, fmt.Errorf("spec.loadBalancerIP %q is not an IP address", s)
		}
		r.Requested = []netip.Addr{ip}
	}
	return r, nil
}

// GetLoadBalancer reports the addresses svc holds.
func (lb *loadBalancer) GetLoadBalancer(ctx context.Context, _ string, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	if err := lb.waitReady(ctx); err != nil {
		return nil, false, err
	}
	ips := lb.c.alloc.Addresses(svc.Namespace + "/" + svc.Name)
	return status(ips), len(ips) > 0, nil
}

// GetLoadBalancerName is upstream's default name, from the Service's UID.
func (lb *loadBalancer) GetLoadBalancerName(_ context.Context, _ string, svc *corev1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(svc)
}

// EnsureLoadBalancer gives svc its addresses. An error (a pool exhausted,
// an address refused) leaves the Service pending; the service controller
// records it as a Warning Event and retries with back-off.
func (lb *loadBalancer) EnsureLoadBalancer(ctx context.Context, _ string, svc *corev1.Service, _ []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	if err := lb.waitReady(ctx); err != nil {
		return nil, err
	}
	req, err := lb.request(svc)
	if err != nil {
		return nil, err
	}
	ips, err := lb.c.alloc.Assign(req)
	if err != nil {
		return nil, err
	}
	lb.pools.changed()
	return status(ips), nil
}

// UpdateLoadBalancer has nothing to do: the nodes announce the addresses,
// so a change of nodes changes nothing here.
func (lb *loadBalancer) UpdateLoadBalancer(context.Context, string, *corev1.Service, []*corev1.Node) error {
	return nil
}

// EnsureLoadBalancerDeleted frees svc's addresses.
func (lb *loadBalancer) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *corev1.Service) error {
	if err := lb.waitReady(ctx); err != nil {
		return err
	}
	lb.c.alloc.Release(svc.Namespace + "/" + svc.Name)
	lb.pools.changed()
	return nil
}

// status is the ingress of a Service holding ips: VIP mode, as the proxy
// must also take the addresses for in-cluster traffic.
func status(ips []netip.Addr) *corev1.LoadBalancerStatus {
	st := &corev1.LoadBalancerStatus{}
	for _, ip := range ips {
		st.Ingress = append(st.Ingress, corev1.LoadBalancerIngress{IP: ip.String(), IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)})
	}
	return st
}
