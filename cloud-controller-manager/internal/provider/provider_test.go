package provider

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"
	servicehelper "k8s.io/cloud-provider/service/helpers"
	"k8s.io/utils/ptr"

	api "trireme.dev/api/config/cloudconfig"
	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
	"trireme.dev/cloud-controller-manager/internal/cloudconfig"
)

func config(t *testing.T, c api.CloudConfiguration) *cloudconfig.Watcher {
	t.Helper()
	api.SetDefaults(&c)
	if errs := api.Validate(&c); len(errs) > 0 {
		t.Fatal(errs)
	}
	return cloudconfig.Static(&c)
}

func node(name string, labels, annotations map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
}

func TestInstances(t *testing.T) {
	inv := api.CloudConfiguration{Machines: []api.Machine{
		{Name: "m1", Zone: "z1", Region: "r1", InstanceType: "vm.large",
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.1"}}},
		{Name: "m2", ProviderID: "metal://rack1/m2", Shutdown: true},
	}}
	exhaustive := inv
	exhaustive.RemoveUnlistedNodes = true
	providedIP := map[string]string{cloudproviderapi.AnnotationAlphaProvidedIPAddr: "10.0.0.9"}
	joinLabels := map[string]string{corev1.LabelTopologyZone: "lz", corev1.LabelTopologyRegion: "lr"}
	for _, tc := range []struct {
		name     string
		cfg      api.CloudConfiguration
		node     *corev1.Node
		exists   bool
		shutdown bool
		md       *cloudprovider.InstanceMetadata
		err      error
	}{
		{
			name: "listed machine", cfg: inv, node: node("m1", joinLabels, providedIP), exists: true,
			md: &cloudprovider.InstanceMetadata{ProviderID: "trireme://m1", Zone: "z1", Region: "r1", InstanceType: "vm.large",
				NodeAddresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.1"}, {Type: corev1.NodeHostName, Address: "m1"}}},
		},
		{
			name: "listed machine shut down, zone from labels", cfg: inv, node: node("m2", joinLabels, providedIP), exists: true, shutdown: true,
			md: &cloudprovider.InstanceMetadata{ProviderID: "metal://rack1/m2", Zone: "lz", Region: "lr",
				NodeAddresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.9"}, {Type: corev1.NodeHostName, Address: "m2"}}},
		},
		{
			name: "unlisted node described by its labels", cfg: inv, node: node("n3", joinLabels, map[string]string{cloudproviderapi.AnnotationAlphaProvidedIPAddr: "10.0.0.3,fd00::3"}), exists: true,
			md: &cloudprovider.InstanceMetadata{ProviderID: "trireme://n3", Zone: "lz", Region: "lr",
				NodeAddresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.3"}, {Type: corev1.NodeInternalIP, Address: "fd00::3"}, {Type: corev1.NodeHostName, Address: "n3"}}},
		},
		{
			name: "unlisted node of an exhaustive inventory is gone", cfg: exhaustive, node: node("n3", nil, providedIP), exists: false,
			err: cloudprovider.InstanceNotFound,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(config(t, tc.cfg))
			in, _ := c.InstancesV2()
			ctx := context.Background()
			if ok, err := in.InstanceExists(ctx, tc.node); err != nil || ok != tc.exists {
				t.Errorf("InstanceExists = %v, %v; want %v", ok, err, tc.exists)
			}
			if ok, err := in.InstanceShutdown(ctx, tc.node); err != nil || ok != tc.shutdown {
				t.Errorf("InstanceShutdown = %v, %v; want %v", ok, err, tc.shutdown)
			}
			md, err := in.InstanceMetadata(ctx, tc.node)
			if !errors.Is(err, tc.err) {
				t.Fatalf("InstanceMetadata error %v, want %v", err, tc.err)
			}
			if !reflect.DeepEqual(md, tc.md) {
				t.Errorf("InstanceMetadata\n got %+v\nwant %+v", md, tc.md)
			}
		})
	}
}

func lbService(ns, name string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.Now()},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
			Ports:          []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80}}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// startLB runs the provider's LoadBalancer over fake Services, as the
// cloud-controller-manager wires it: SetInformers, then the informers.
func startLB(t *testing.T, cfg api.CloudConfiguration, objs ...*corev1.Service) *Cloud {
	t.Helper()
	cs := fake.NewClientset()
	for _, o := range objs {
		if _, err := cs.CoreV1().Services(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := New(config(t, cfg))
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	c.lb.stop = stop
	close(c.lb.pools.served) // no AddressPool resource
	f := informers.NewSharedInformerFactory(cs, 0)
	c.SetInformers(f)
	f.Start(stop)
	return c
}

func TestLoadBalancer(t *testing.T) {
	pools := api.CloudConfiguration{LoadBalancer: api.LoadBalancer{Pools: []api.Pool{
		{Name: "default", AddressPoolSpec: lbv1alpha1.AddressPoolSpec{Addresses: []string{"192.168.50.0/30"}}},
	}}}
	// Restored from status after a restart: web holds .0, and a Service
	// with another class holds .2 in its status, which is not ours.
	web := lbService("a", "web", func(s *corev1.Service) {
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.168.50.0"}}
	})
	other := lbService("a", "other", func(s *corev1.Service) {
		s.Spec.LoadBalancerClass = ptr.To("example.com/lb")
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.168.50.2"}}
	})
	gone := lbService("a", "gone", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeClusterIP
		s.Finalizers = []string{servicehelper.LoadBalancerCleanupFinalizer}
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.168.50.1"}}
	})
	c := startLB(t, pools, web, other, gone)
	lb, _ := c.LoadBalancer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	ensure := func(svc *corev1.Service) (string, error) {
		st, err := lb.EnsureLoadBalancer(ctx, "trireme", svc, nil)
		if err != nil {
			return "", err
		}
		var ips []string
		for _, in := range st.Ingress {
			if ptr.Deref(in.IPMode, "") != corev1.LoadBalancerIPModeVIP {
				t.Errorf("ingress %s has ipMode %v, want VIP", in.IP, in.IPMode)
			}
			ips = append(ips, in.IP)
		}
		return strings.Join(ips, ","), nil
	}
	for _, step := range []struct {
		name   string
		do     func() (string, error)
		want   string
		errHas string
	}{
		{name: "restored Service keeps its address", do: func() (string, error) { return ensure(web) }, want: "192.168.50.0"},
		{name: "new Service skips restored addresses", do: func() (string, error) { return ensure(lbService("b", "new")) }, want: "192.168.50.2"},
		{name: "last free address", do: func() (string, error) { return ensure(lbService("b", "more")) }, want: "192.168.50.3"},
		{name: "exhausted", do: func() (string, error) { return ensure(lbService("b", "none")) }, errHas: `no free IPv4 address in address pool "default"`},
		{name: "cleanup of a Service that stopped being a LoadBalancer frees", do: func() (string, error) {
			return "", lb.EnsureLoadBalancerDeleted(ctx, "trireme", gone)
		}},
		{name: "freed address handed out", do: func() (string, error) { return ensure(lbService("b", "none")) }, want: "192.168.50.1"},
		{name: "bad loadBalancerIP", do: func() (string, error) {
			return ensure(lbService("b", "bad", func(s *corev1.Service) { s.Spec.LoadBalancerIP = "nope" }))
		}, errHas: "spec.loadBalancerIP"},
		{name: "shared", do: func() (string, error) {
			return ensure(lbService("b", "dns", func(s *corev1.Service) {
				s.Spec.LoadBalancerIP = "192.168.50.0"
				s.Spec.Ports[0].Port = 53
			}))
		}, errHas: "already in use by Service a/web"},
	} {
		got, err := step.do()
		if step.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), step.errHas) {
				t.Fatalf("%s: got %q, %v; want an error containing %q", step.name, got, err, step.errHas)
			}
			continue
		}
		if err != nil || got != step.want {
			t.Fatalf("%s: got %q, %v; want %q", step.name, got, err, step.want)
		}
	}
	st, exists, err := lb.GetLoadBalancer(ctx, "trireme", web)
	if err != nil || !exists || st.Ingress[0].IP != "192.168.50.0" {
		t.Fatalf("GetLoadBalancer = %v, %v, %v", st, exists, err)
	}
	if _, exists, _ := lb.GetLoadBalancer(ctx, "trireme", lbService("c", "unknown")); exists {
		t.Fatal("GetLoadBalancer of a Service without addresses says it exists")
	}
}
