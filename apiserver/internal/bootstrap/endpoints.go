package bootstrap

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Every apiserver keeps a Lease in kube-system saying where it serves; the
// kubernetes Service's endpoints list the apiservers whose lease is fresh.
const (
	leaseLabel         = "apiserver.kubernetes.io/endpoint"
	addressAnnotation  = "trireme.dev/advertise-address"
	leaseDuration      = 15 * time.Second
	reconcileInterval  = 10 * time.Second
	skipMirrorLabel    = "endpointslice.kubernetes.io/skip-mirror"
	kubernetesService  = "kubernetes"
	kubernetesPortName = "https"
)

func (b *Bootstrap) leaseName() string {
	ip := strings.NewReplacer(".", "-", ":", "-").Replace(b.AdvertiseIP.String())
	return fmt.Sprintf("apiserver-endpoint-%s-%d", ip, b.AdvertisePort)
}

// runEndpointsReconciler renews this apiserver's lease and rewrites the
// kubernetes Service's endpoints until ctx ends, then withdraws itself.
func (b *Bootstrap) runEndpointsReconciler(ctx context.Context) {
	log := logr.FromContextOrDiscard(ctx).WithName("endpoints-reconciler")
	tick := time.NewTicker(reconcileInterval)
	defer tick.Stop()
	for {
		if err := b.reconcileEndpoints(ctx, true); err != nil && ctx.Err() == nil {
			log.Error(err, "Reconcile kubernetes service endpoints")
		}
		select {
		case <-ctx.Done():
			// Withdraw so clients stop being sent to a server that is going away.
			stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = b.Client.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(stop, b.leaseName(), metav1.DeleteOptions{})
			_ = b.reconcileEndpoints(stop, false)
			return
		case <-tick.C:
		}
	}
}

func (b *Bootstrap) reconcileEndpoints(ctx context.Context, renew bool) error {
	if renew {
		// A deleted kubernetes Service comes back, as upstream restores it;
		// failing that must not stop the endpoints from being written.
		if err := b.ensureKubernetesService(ctx); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "Restore the kubernetes Service")
		}
		if err := b.renewLease(ctx); err != nil {
			return err
		}
	}
	leases, err := b.Client.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: leaseLabel})
	if err != nil {
		return fmt.Errorf("list apiserver leases: %w", err)
	}
	now := time.Now()
	var ips []string
	for _, l := range leases.Items {
		if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
			continue
		}
		if l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second).Before(now) {
			continue
		}
		host, _, err := net.SplitHostPort(l.Annotations[addressAnnotation])
		if err == nil && net.ParseIP(host) != nil {
			ips = append(ips, host)
		}
	}
	sort.Strings(ips)
	if err := b.writeEndpoints(ctx, ips); err != nil {
		return err
	}
	return b.writeEndpointSlice(ctx, ips)
}

func (b *Bootstrap) renewLease(ctx context.Context) error {
	api := b.Client.CoordinationV1().Leases(metav1.NamespaceSystem)
	now := metav1.NewMicroTime(time.Now())
	want := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(b.ServerID),
		LeaseDurationSeconds: ptr.To(int32(leaseDuration / time.Second)),
		RenewTime:            &now,
	}
	lease, err := api.Get(ctx, b.leaseName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		want.AcquireTime = &now
		_, err = api.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name:        b.leaseName(),
				Labels:      map[string]string{leaseLabel: "true"},
				Annotations: map[string]string{addressAnnotation: net.JoinHostPort(b.AdvertiseIP.String(), strconv.Itoa(b.AdvertisePort))},
			},
			Spec: want,
		}, metav1.CreateOptions{})
		return ignoreExists(err)
	}
	if err != nil {
		return fmt.Errorf("get apiserver lease: %w", err)
	}
	want.AcquireTime = lease.Spec.AcquireTime
	lease.Spec = want
	if _, err := api.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renew apiserver lease: %w", err)
	}
	return nil
}

func (b *Bootstrap) writeEndpoints(ctx context.Context, ips []string) error {
	api := b.Client.CoreV1().Endpoints(metav1.NamespaceDefault)
	want := corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesService, Labels: map[string]string{skipMirrorLabel: "true"}},
	}
	if len(ips) > 0 {
		subset := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: kubernetesPortName, Port: int32(b.AdvertisePort), Protocol: corev1.ProtocolTCP}}}
		for _, ip := range ips {
			subset.Addresses = append(subset.Addresses, corev1.EndpointAddress{IP: ip})
		}
		want.Subsets = []corev1.EndpointSubset{subset}
	}
	cur, err := api.Get(ctx, kubernetesService, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, &want, metav1.CreateOptions{})
		return ignoreExists(err)
	}
	if err != nil {
		return fmt.Errorf("get kubernetes endpoints: %w", err)
	}
	if apiequality.Semantic.DeepEqual(cur.Subsets, want.Subsets) && cur.Labels[skipMirrorLabel] == "true" {
		return nil
	}
	cur.Subsets = want.Subsets
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels[skipMirrorLabel] = "true"
	_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

func (b *Bootstrap) writeEndpointSlice(ctx context.Context, ips []string) error {
	api := b.Client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	want := discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: kubernetesService, Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesService}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(kubernetesPortName), Port: ptr.To(int32(b.AdvertisePort)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, ip := range ips {
		want.Endpoints = append(want.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	cur, err := api.Get(ctx, kubernetesService, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, &want, metav1.CreateOptions{})
		return ignoreExists(err)
	}
	if err != nil {
		return fmt.Errorf("get kubernetes endpointslice: %w", err)
	}
	if apiequality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && apiequality.Semantic.DeepEqual(cur.Ports, want.Ports) {
		return nil
	}
	cur.Endpoints, cur.Ports = want.Endpoints, want.Ports
	_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}
