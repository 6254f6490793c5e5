package services

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/klog/v2"

	"trireme.dev/apiserver/internal/alloc/ipaddress"
	"trireme.dev/apiserver/internal/alloc/portrange"
	"trireme.dev/apiserver/internal/registry"
)

// Allocators are the ClusterIP and NodePort allocators services draw from.
type Allocators struct {
	// IPs holds one allocator per IP family the cluster serves, in the
	// order of --service-cluster-ip-range: the first is the primary family,
	// which Services get when they do not ask for one.
	IPs   []*ipaddress.Allocator
	Ports *portrange.Allocator
}

// allocator returns the allocator of family f, or nil when the cluster does
// not serve f.
func (a *Allocators) allocator(f corev1.IPFamily) *ipaddress.Allocator {
	for _, ips := range a.IPs {
		if familyOf(ips.CIDR().Addr().String()) == f {
			return ips
		}
	}
	return nil
}

// primaryFamily is the family of the first service range.
func (a *Allocators) primaryFamily() corev1.IPFamily {
	return familyOf(a.IPs[0].CIDR().Addr().String())
}

// dualStack reports whether the cluster serves both families.
func (a *Allocators) dualStack() bool { return len(a.IPs) == 2 }

// Resource describes the services resource.
func Resource(a *Allocators) *registry.Resource {
	return &registry.Resource{
		GroupVersion: corev1.SchemeGroupVersion,
		Name:         "services",
		Kind:         "Service",
		New:          func() runtime.Object { return &corev1.Service{} },
		NewList:      func() runtime.Object { return &corev1.ServiceList{} },
		Namespaced:   true,
		Status:       true,
		ShortNames:   []string{"svc"},
		Categories:   []string{"all"},
		Hooks: registry.Hooks{
			PrepareForUpdate: func(_ context.Context, obj, old runtime.Object) {
				carryAllocations(obj.(*corev1.Service), old.(*corev1.Service))
			},
		},
		StoreHooks: func(s *genericregistry.Store) {
			s.BeginCreate = a.beginCreate
			s.BeginUpdate = a.beginUpdate
			s.AfterDelete = a.afterDelete
		},
	}
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

func needsNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func needsHealthCheckPort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// release is what a finished-but-failed request must give back.
type release struct {
	ips   []netip.Addr
	ports []int
}

func (a *Allocators) undo(ctx context.Context, r release) {
	for _, ip := range r.ips {
		ips := a.allocator(familyOf(ip.String()))
		if ips == nil {
			// The cluster no longer serves this family; nothing holds it.
			klog.FromContext(ctx).V(4).Info("Not releasing cluster IP of a family the cluster does not serve", "ip", ip)
			continue
		}
		if err := ips.Release(ctx, ip); err != nil {
			klog.FromContext(ctx).Error(err, "Release cluster IP", "ip", ip)
		}
	}
	if len(r.ports) > 0 {
		if err := a.Ports.Release(ctx, r.ports); err != nil {
			klog.FromContext(ctx).Error(err, "Release node ports", "ports", r.ports)
		}
	}
}

func finish(a *Allocators, r release, dryRun bool) genericregistry.FinishFunc {
	return func(ctx context.Context, success bool) {
		if !success && !dryRun {
			a.undo(context.WithoutCancel(ctx), r)
		}
	}
}

func (a *Allocators) beginCreate(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
	svc := obj.(*corev1.Service)
	dryRun := len(options.DryRun) > 0
	var taken release
	if err := a.initFamilies(svc, nil); err != nil {
		return nil, err
	}
	if needsClusterIP(svc) {
		ips, err := a.allocateIPs(ctx, svc, 0, dryRun)
		if err != nil {
			return nil, err
		}
		taken.ips = ips
	}
	ports, err := a.allocatePorts(ctx, svc, nil, dryRun)
	if err != nil {
		a.undoUnlessDry(ctx, taken, dryRun)
		return nil, err
	}
	taken.ports = ports
	return finish(a, taken, dryRun), nil
}

func (a *Allocators) undoUnlessDry(ctx context.Context, r release, dryRun bool) {
	if !dryRun {
		a.undo(ctx, r)
	}
}

func (a *Allocators) beginUpdate(ctx context.Context, obj, oldObj runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
	svc, old := obj.(*corev1.Service), oldObj.(*corev1.Service)
	dryRun := len(options.DryRun) > 0
	dropTypeDependentFields(svc, old)
	carryAllocations(svc, old)
	if err := a.initFamilies(svc, old); err != nil {
		return nil, err
	}
	var taken, freed release
	switch {
	case old.Spec.Type == corev1.ServiceTypeExternalName && needsClusterIP(svc):
		ips, err := a.allocateIPs(ctx, svc, 0, dryRun)
		if err != nil {
			return nil, err
		}
		taken.ips = ips
	case needsClusterIP(old) && svc.Spec.Type == corev1.ServiceTypeExternalName:
		freed.ips = clusterIPsOf(old)
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
	case needsClusterIP(old) && needsClusterIP(svc) && len(old.Spec.IPFamilies) == 1 && len(svc.Spec.IPFamilies) == 2:
		// Upgrade to dual-stack: the secondary family gets an address.
		ips, err := a.allocateIPs(ctx, svc, 1, dryRun)
		if err != nil {
			return nil, err
		}
		taken.ips = ips
	case needsClusterIP(old) && needsClusterIP(svc) && len(old.Spec.IPFamilies) == 2 && len(svc.Spec.IPFamilies) == 1:
		// Downgrade: the secondary address goes back once the update lands.
		if ips := clusterIPsOf(old); len(ips) == 2 {
			freed.ips = ips[1:]
		}
	}
	ports, err := a.allocatePorts(ctx, svc, old, dryRun)
	if err != nil {
		a.undoUnlessDry(ctx, taken, dryRun)
		return nil, err
	}
	taken.ports = ports
	freed.ports = droppedPorts(svc, old)
	return func(ctx context.Context, success bool) {
		if dryRun {
			return
		}
		if success {
			a.undo(context.WithoutCancel(ctx), freed)
		} else {
			a.undo(context.WithoutCancel(ctx), taken)
		}
	}, nil
}

func (a *Allocators) afterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	if len(options.DryRun) > 0 {
		return
	}
	svc := obj.(*corev1.Service)
	var r release
	if needsClusterIP(svc) {
		r.ips = clusterIPsOf(svc)
	}
	r.ports = nodePortsOf(svc)
	a.undo(context.Background(), r)
}

// clusterIPsOf returns the addresses a Service holds.
func clusterIPsOf(svc *corev1.Service) []netip.Addr {
	var out []netip.Addr
	for _, s := range svc.Spec.ClusterIPs {
		if ip, err := netip.ParseAddr(s); err == nil {
			out = append(out, ip)
		}
	}
	if len(out) == 0 {
		if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
			out = append(out, ip)
		}
	}
	return out
}

// allocateIPs gives each of svc's families from index from on an address
// of its range: the one the client asked for in clusterIPs, or any free one.
// It returns what it took; on error it has given everything back.
func (a *Allocators) allocateIPs(ctx context.Context, svc *corev1.Service, from int, dryRun bool) ([]netip.Addr, error) {
	spec := &svc.Spec
	for len(spec.ClusterIPs) < len(spec.IPFamilies) {
		spec.ClusterIPs = append(spec.ClusterIPs, "")
	}
	var taken []netip.Addr
	fail := func(err error) ([]netip.Addr, error) {
		if !dryRun {
			a.undo(ctx, release{ips: taken})
		}
		return nil, err
	}
	for i := from; i < len(spec.IPFamilies); i++ {
		fam := spec.IPFamilies[i]
		ips := a.allocator(fam)
		if ips == nil {
			return fail(invalid(svc, field.Invalid(familiesPath.Index(i), fam, "not configured on this cluster")))
		}
		var want netip.Addr
		if s := spec.ClusterIPs[i]; s != "" {
			ip, err := netip.ParseAddr(s)
			if err != nil {
				return fail(invalid(svc, field.Invalid(ipsPath.Index(i), s, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")))
			}
			want = ip
		}
		ip, err := ips.Allocate(ctx, svc, want, dryRun)
		switch {
		case errors.Is(err, ipaddress.ErrNotInRange):
			return fail(invalid(svc, field.Invalid(ipsPath, spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", want, want, ips.CIDR()))))
		case errors.Is(err, ipaddress.ErrAllocated):
			return fail(invalid(svc, field.Invalid(ipsPath, spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %s: %v", want, err))))
		case errors.Is(err, ipaddress.ErrFull):
			return fail(apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full")))
		case err != nil:
			return fail(apierrors.NewInternalError(err))
		}
		taken = append(taken, ip)
		spec.ClusterIPs[i] = ip.String()
	}
	if len(spec.ClusterIPs) > 0 {
		spec.ClusterIP = spec.ClusterIPs[0]
	}
	return taken, nil
}

// allocatePorts gives every port of svc that needs a node port one it does
// not already hold in old, and the health-check port when needed. It returns
// what it newly took.
func (a *Allocators) allocatePorts(ctx context.Context, svc, old *corev1.Service, dryRun bool) ([]int, error) {
	held := map[int]bool{}
	if old != nil {
		for _, p := range nodePortsOf(old) {
			held[p] = true
		}
	}
	type slot struct {
		set  func(int32)
		path *field.Path
		want int
	}
	var slots []slot
	if needsNodePorts(svc) {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort != 0 && held[int(p.NodePort)] {
				continue
			}
			slots = append(slots, slot{func(v int32) { p.NodePort = v }, field.NewPath("spec", "ports").Index(i).Child("nodePort"), int(p.NodePort)})
		}
	} else if svc.Spec.Type == corev1.ServiceTypeClusterIP || svc.Spec.Type == corev1.ServiceTypeExternalName {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckPort(svc) {
		if hc := int(svc.Spec.HealthCheckNodePort); hc == 0 || !held[hc] {
			slots = append(slots, slot{func(v int32) { svc.Spec.HealthCheckNodePort = v }, field.NewPath("spec", "healthCheckNodePort"), hc})
		}
	} else {
		svc.Spec.HealthCheckNodePort = 0
	}
	if len(slots) == 0 {
		return nil, nil
	}
	want := make([]int, len(slots))
	for i, s := range slots {
		want[i] = s.want
	}
	got, err := a.Ports.Allocate(ctx, want, dryRun)
	var pe *portrange.PortError
	switch {
	case errors.As(err, &pe) && !errors.Is(err, portrange.ErrFull):
		return nil, invalid(svc, field.Invalid(slots[pe.Index].path, pe.Port, err.Error()))
	case errors.As(err, &pe):
		return nil, apierrors.NewInternalError(errors.New("failed to allocate a nodePort: range is full"))
	case err != nil:
		return nil, apierrors.NewInternalError(err)
	}
	for i, s := range slots {
		if dryRun && got[i] == 0 {
			continue
		}
		s.set(int32(got[i]))
	}
	return got, nil
}

// dropTypeDependentFields clears what only the old type needed when the
// client changed the type but left those fields as they were, as upstream
// does: `kubectl patch -p '{"spec":{"type":"ClusterIP"}}'` on a NodePort
// Service then just works.
func dropTypeDependentFields(svc, old *corev1.Service) {
	if svc.Spec.Type == old.Spec.Type {
		return
	}
	if needsNodePorts(old) && !needsNodePorts(svc) {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			for _, op := range old.Spec.Ports {
				if op.NodePort != 0 && p.NodePort == op.NodePort {
					p.NodePort = 0
				}
			}
		}
	}
	if needsHealthCheckPort(old) && !needsHealthCheckPort(svc) && svc.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	external := func(s *corev1.Service) bool {
		return s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer
	}
	if external(old) && !external(svc) && svc.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		if ptrEqual(svc.Spec.AllocateLoadBalancerNodePorts, old.Spec.AllocateLoadBalancerNodePorts) {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if ptrEqual(svc.Spec.LoadBalancerClass, old.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
	}
}

func ptrEqual[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// carryAllocations keeps what a client left out on update, as upstream
// does: the ClusterIP(s) and each port's node port when the type keeps them.
func carryAllocations(svc, old *corev1.Service) {
	if needsClusterIP(svc) && needsClusterIP(old) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 {
			svc.Spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
		}
	}
	if svc.Spec.ClusterIP == old.Spec.ClusterIP && len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = slices.Clone(old.Spec.IPFamilies)
		if svc.Spec.IPFamilyPolicy == nil {
			svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		}
	}
	if needsNodePorts(svc) && needsNodePorts(old) {
		oldPorts := map[[2]any]int32{}
		for _, p := range old.Spec.Ports {
			oldPorts[[2]any{p.Port, p.Protocol}] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 {
				p.NodePort = oldPorts[[2]any{p.Port, p.Protocol}]
			}
		}
	}
	if needsHealthCheckPort(svc) && needsHealthCheckPort(old) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

func nodePortsOf(svc *corev1.Service) []int {
	var out []int
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out = append(out, int(p.NodePort))
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		out = append(out, int(svc.Spec.HealthCheckNodePort))
	}
	return out
}

// droppedPorts are the node ports old held that svc no longer does.
func droppedPorts(svc, old *corev1.Service) []int {
	keep := map[int]bool{}
	for _, p := range nodePortsOf(svc) {
		keep[p] = true
	}
	var out []int
	for _, p := range nodePortsOf(old) {
		if !keep[p] {
			out = append(out, p)
		}
	}
	return out
}

func invalid(svc *corev1.Service, errs ...*field.Error) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
}
