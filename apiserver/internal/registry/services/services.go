package services

import (
	"context"
	"errors"
	"net/netip"

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
	IPs   *ipaddress.Allocator
	Ports *portrange.Allocator
}

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
	ip    netip.Addr
	ports []int
}

func (a *Allocators) undo(ctx context.Context, r release) {
	if r.ip.IsValid() {
		if err := a.IPs.Release(ctx, r.ip); err != nil {
			klog.FromContext(ctx).Error(err, "Release cluster IP", "ip", r.ip)
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
	setFamilies(svc)
	if needsClusterIP(svc) {
		ip, err := a.allocateIP(ctx, svc, dryRun)
		if err != nil {
			return nil, err
		}
		taken.ip = ip
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
	setFamilies(svc)
	var taken, freed release
	if needsClusterIP(svc) && svc.Spec.ClusterIP == "" || needsClusterIP(svc) && !needsClusterIP(old) {
		ip, err := a.allocateIP(ctx, svc, dryRun)
		if err != nil {
			return nil, err
		}
		taken.ip = ip
	}
	if !needsClusterIP(svc) && needsClusterIP(old) {
		freed.ip, _ = netip.ParseAddr(old.Spec.ClusterIP)
		if svc.Spec.Type == corev1.ServiceTypeExternalName {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
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
		r.ip, _ = netip.ParseAddr(svc.Spec.ClusterIP)
	}
	r.ports = nodePortsOf(svc)
	a.undo(context.Background(), r)
}

// setFamilies records the single IPv4 family the cluster serves.
func setFamilies(svc *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if svc.Spec.IPFamilyPolicy == nil {
		p := corev1.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &p
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
	}
}

func (a *Allocators) allocateIP(ctx context.Context, svc *corev1.Service, dryRun bool) (netip.Addr, error) {
	path := field.NewPath("spec", "clusterIPs").Index(0)
	var want netip.Addr
	if svc.Spec.ClusterIP != "" {
		ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil {
			return netip.Addr{}, invalid(svc, field.Invalid(path, svc.Spec.ClusterIP, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
		}
		want = ip
	}
	ip, err := a.IPs.Allocate(ctx, svc, want, dryRun)
	switch {
	case errors.Is(err, ipaddress.ErrAllocated), errors.Is(err, ipaddress.ErrNotInRange):
		return netip.Addr{}, invalid(svc, field.Invalid(path, svc.Spec.ClusterIP, "failed to allocate IP "+svc.Spec.ClusterIP+": "+err.Error()))
	case errors.Is(err, ipaddress.ErrFull):
		return netip.Addr{}, apierrors.NewInternalError(errors.New("failed to allocate a serviceIP: range is full"))
	case err != nil:
		return netip.Addr{}, apierrors.NewInternalError(err)
	}
	svc.Spec.ClusterIP = ip.String()
	svc.Spec.ClusterIPs = []string{ip.String()}
	return ip, nil
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
	if needsClusterIP(svc) && needsClusterIP(old) && svc.Spec.ClusterIP == "" {
		svc.Spec.ClusterIP = old.Spec.ClusterIP
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if svc.Spec.ClusterIP == old.Spec.ClusterIP && len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = old.Spec.IPFamilies
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
