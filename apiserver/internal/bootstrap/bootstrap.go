// Package bootstrap creates and keeps the objects a cluster has from its
// first start: the system namespaces, the built-in priority classes, the
// default ServiceCIDR, the kubernetes Service with endpoints listing the
// live apiservers, and API Priority and Fairness's bootstrap configuration.
package bootstrap

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	flowcontrolbootstrap "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/apiserver/internal/apis"
	"trireme.dev/apiserver/internal/registry/services"
)

// Bootstrap holds what the bootstrap hooks need.
type Bootstrap struct {
	Client        kubernetes.Interface
	Stores        apis.Stores
	Allocators    *services.Allocators
	ServiceCIDRs  []netip.Prefix
	AdvertiseIP   net.IP
	AdvertisePort int
	ServerID      string
}

// AddHooks registers the bootstrap post-start hooks on srv. Readiness waits
// for them, so clients never see a cluster without its namespaces.
func (b *Bootstrap) AddHooks(srv *genericapiserver.GenericAPIServer) error {
	hooks := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"trireme-system-namespaces", b.ensureNamespaces},
		{"trireme-priority-classes", b.ensurePriorityClasses},
		{"trireme-service-cidr", b.ensureServiceCIDR},
		{"trireme-flowcontrol-config", b.ensureFlowControl},
		{"trireme-node-port-repair", b.repairNodePorts},
	}
	for _, h := range hooks {
		h := h
		if err := srv.AddPostStartHook(h.name, func(hc genericapiserver.PostStartHookContext) error {
			return retry(hc, h.name, h.fn)
		}); err != nil {
			return err
		}
	}
	return srv.AddPostStartHook("trireme-kubernetes-service", func(hc genericapiserver.PostStartHookContext) error {
		if err := retry(hc, "kubernetes service", b.ensureKubernetesService); err != nil {
			return err
		}
		go b.runEndpointsReconciler(hc)
		return nil
	})
}

// retry runs fn until it succeeds or the server stops; the loopback API may
// refuse requests for a moment after start.
func retry(ctx context.Context, what string, fn func(context.Context) error) error {
	log := logr.FromContextOrDiscard(ctx)
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if last = fn(ctx); last != nil {
			log.V(2).Info("Bootstrap step failed, retrying", "step", what, "err", last)
			return false, nil
		}
		return true, nil
	})
	if ctx.Err() != nil {
		// The server is stopping; a failed hook would make it exit fatally.
		return nil
	}
	if err != nil {
		return fmt.Errorf("bootstrap %s: %w (last error: %v)", what, err, last)
	}
	return nil
}

// ignoreExists treats an AlreadyExists as success: another apiserver made it.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (b *Bootstrap) ensureNamespaces(ctx context.Context) error {
	for _, name := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		if _, err := b.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err == nil {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := b.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	}
	return nil
}

func (b *Bootstrap) ensurePriorityClasses(ctx context.Context) error {
	classes := []schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000, Description: "Used for system critical pods that must not be moved from their current node."},
		{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000, Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
	}
	for i := range classes {
		if _, err := b.Client.SchedulingV1().PriorityClasses().Create(ctx, &classes[i], metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create priority class %s: %w", classes[i].Name, err)
		}
	}
	return nil
}

// defaultServiceCIDR is the name upstream gives the ServiceCIDR made from
// --service-cluster-ip-range.
const defaultServiceCIDR = "kubernetes"

func (b *Bootstrap) ensureServiceCIDR(ctx context.Context) error {
	api := b.Client.NetworkingV1().ServiceCIDRs()
	var want []string
	for _, c := range b.ServiceCIDRs {
		want = append(want, c.Masked().String())
	}
	sc, err := api.Get(ctx, defaultServiceCIDR, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		sc, err = api.Create(ctx, &networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: defaultServiceCIDR},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: want},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("ensure ServiceCIDR: %w", err)
	}
	if len(sc.Spec.CIDRs) == 1 && len(want) == 2 && sc.Spec.CIDRs[0] == want[0] {
		// The cluster was made dual-stack: the default range gains its
		// secondary CIDR, the one change to it upstream allows.
		sc.Spec.CIDRs = want
		if sc, err = api.Update(ctx, sc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("add secondary CIDR to ServiceCIDR: %w", err)
		}
	} else if !slices.Equal(sc.Spec.CIDRs, want) {
		logr.FromContextOrDiscard(ctx).Info("Default ServiceCIDR differs from --service-cluster-ip-range; keeping it", "cidrs", sc.Spec.CIDRs, "flag", want)
	}
	for _, c := range sc.Status.Conditions {
		if c.Type == networkingv1.ServiceCIDRConditionReady && c.Status == metav1.ConditionTrue {
			return nil
		}
	}
	sc.Status.Conditions = []metav1.Condition{{
		Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
		Reason: "Ready", Message: "Kubernetes Service CIDR is ready", LastTransitionTime: metav1.Now(),
	}}
	if _, err := api.UpdateStatus(ctx, sc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("mark ServiceCIDR ready: %w", err)
	}
	return nil
}

// ensureFlowControl creates API Priority and Fairness's mandatory and
// suggested objects when missing, leaving the ones a user changed alone.
func (b *Bootstrap) ensureFlowControl(ctx context.Context) error {
	fc := b.Client.FlowcontrolV1()
	plcs := append(append([]*flowcontrolv1.PriorityLevelConfiguration{}, flowcontrolbootstrap.MandatoryPriorityLevelConfigurations...), flowcontrolbootstrap.SuggestedPriorityLevelConfigurations...)
	for _, p := range plcs {
		if _, err := fc.PriorityLevelConfigurations().Create(ctx, p, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create priority level %s: %w", p.Name, err)
		}
	}
	schemas := append(append([]*flowcontrolv1.FlowSchema{}, flowcontrolbootstrap.MandatoryFlowSchemas...), flowcontrolbootstrap.SuggestedFlowSchemas...)
	for _, s := range schemas {
		if _, err := fc.FlowSchemas().Create(ctx, s, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create flow schema %s: %w", s.Name, err)
		}
	}
	return nil
}

// repairNodePorts rebuilds the NodePort bitmap from the stored Services, so
// ports leaked by a crash between allocation and write come back.
func (b *Bootstrap) repairNodePorts(ctx context.Context) error {
	list, err := b.Client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list services: %w", err)
	}
	var used []int
	for _, svc := range list.Items {
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				used = append(used, int(p.NodePort))
			}
		}
		if svc.Spec.HealthCheckNodePort != 0 {
			used = append(used, int(svc.Spec.HealthCheckNodePort))
		}
	}
	return b.Allocators.Ports.Reset(ctx, used)
}

func (b *Bootstrap) ensureKubernetesService(ctx context.Context) error {
	api := b.Client.CoreV1().Services(metav1.NamespaceDefault)
	if _, err := api.Get(ctx, "kubernetes", metav1.GetOptions{}); err == nil {
		return nil
	}
	// As upstream, the kubernetes Service is single-stack, on the first
	// address of the primary range.
	ip := b.Allocators.IPs[0].First().String()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "kubernetes",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"},
		},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: ip,
			Ports: []corev1.ServicePort{{
				Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(int32(b.AdvertisePort)),
			}},
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
	if _, err := api.Create(ctx, svc, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create kubernetes service: %w", err)
	}
	return nil
}
