package integration

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"

	"trireme.dev/componentbase/testwait"
)

// serviceRange and the node port range are the shared server's
// (sharedArgs), upstream's defaults. The node ports the tests choose
// themselves lie in the range's static band (30000-30085), which the ports
// the server picks for the tests running meanwhile avoid.
var (
	serviceRange  = netip.MustParsePrefix(serviceCIDR)
	nodePortFirst = 30000
	nodePortLast  = 32767
)

// service returns a Service named name of type typ with one TCP port.
func service(name string, typ corev1.ServiceType) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: webLabels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
}

func TestKubernetesService(t *testing.T) {
	ctx := testContext(t)
	u, err := url.Parse(config.Host)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("service has the first IP of the range", func(t *testing.T) {
		svc, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if svc.Spec.ClusterIP != kubernetesSvcIP || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].Name != "https" {
			t.Errorf("kubernetes service: clusterIP %s ports %+v, want %s and https/443", svc.Spec.ClusterIP, svc.Spec.Ports, kubernetesSvcIP)
		}
	})

	t.Run("kubectl shows the secure port as targetPort", func(t *testing.T) {
		ports := jsonpath(t, "{.spec.clusterIP} {.spec.ports[0].name} {.spec.ports[0].port} {.spec.ports[0].targetPort}", "get", "service", "kubernetes")
		if want := fmt.Sprintf("%s https 443 %d", kubernetesSvcIP, port); ports != want {
			t.Errorf("kubernetes service clusterIP and port = %q, want %q (first IP of %s; the apiserver's secure port)", ports, want, serviceCIDR)
		}
		tb := testcluster.ParseTable(t, kubectlOK(t, "get", "svc", "kubernetes").Stdout)
		tb.WantHeader(t, "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE")
		row := tb.Row(t, "NAME", "kubernetes")
		want := map[string]string{"TYPE": "ClusterIP", "CLUSTER-IP": kubernetesSvcIP, "EXTERNAL-IP": "<none>", "PORT(S)": "443/TCP"}
		for col, v := range want {
			if row[col] != v {
				t.Errorf("%s = %q, want %q", col, row[col], v)
			}
		}
	})

	// As upstream, a server bound to loopback advertises the host's
	// default-route address: endpoints may not be loopback addresses.
	advertised, err := utilnet.ResolveBindAddress(net.IPv4zero)
	if err != nil {
		t.Fatalf("this machine has no default-route address to advertise: %v", err)
	}
	want := advertised.String()

	t.Run("endpoints list the server", func(t *testing.T) {
		testwait.For(t, 20*time.Second, "kubernetes endpoints list "+want, func(ctx context.Context) (bool, error) {
			ep, err := client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 1 && ep.Subsets[0].Addresses[0].IP == want &&
				len(ep.Subsets[0].Ports) == 1 && int(ep.Subsets[0].Ports[0].Port) == port, nil
		})
	})

	t.Run("endpointslice lists the server", func(t *testing.T) {
		testwait.For(t, 20*time.Second, "kubernetes endpointslice lists "+want, func(ctx context.Context) (bool, error) {
			es, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return es.AddressType == discoveryv1.AddressTypeIPv4 && es.Labels[discoveryv1.LabelServiceName] == "kubernetes" &&
				len(es.Endpoints) == 1 && len(es.Endpoints[0].Addresses) == 1 && es.Endpoints[0].Addresses[0] == want &&
				len(es.Ports) == 1 && es.Ports[0].Port != nil && int(*es.Ports[0].Port) == port, nil
		})
	})

	t.Run("default service cidr is ready", func(t *testing.T) {
		sc, err := client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ready := false
		for _, c := range sc.Status.Conditions {
			ready = ready || c.Type == "Ready" && c.Status == metav1.ConditionTrue
		}
		if len(sc.Spec.CIDRs) != 1 || sc.Spec.CIDRs[0] != serviceRange.String() || !ready {
			t.Errorf("ServiceCIDR kubernetes: cidrs %v conditions %+v, want [%s] and Ready", sc.Spec.CIDRs, sc.Status.Conditions, serviceRange)
		}
	})
}

func TestServiceClusterIPs(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	api := client.CoreV1().Services(ns)

	t.Run("concurrent creates get unique IPs in range", func(t *testing.T) {
		const n = 50
		ips := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				svc, err := api.Create(ctx, service(uniqueName("svc"), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
				if err == nil {
					ips[i] = svc.Spec.ClusterIP
				}
				errs[i] = err
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for i, ip := range ips {
			if errs[i] != nil {
				t.Errorf("create %d: %v", i, errs[i])
				continue
			}
			addr, err := netip.ParseAddr(ip)
			if err != nil || !serviceRange.Contains(addr) || ip == kubernetesSvcIP {
				t.Errorf("clusterIP %q is not a free address of %s", ip, serviceRange)
			}
			if seen[ip] {
				t.Errorf("clusterIP %s given twice", ip)
			}
			seen[ip] = true
		}
	})

	t.Run("allocated IP has an IPAddress object", func(t *testing.T) {
		svc, err := api.Create(ctx, service(uniqueName("svc"), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP ||
			len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != corev1.IPv4Protocol ||
			svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			t.Errorf("service spec clusterIPs %v families %v policy %v, want [clusterIP], [IPv4], SingleStack",
				svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy)
		}
		ip, err := client.NetworkingV1().IPAddresses().Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("IPAddress for %s: %v", svc.Spec.ClusterIP, err)
		}
		ref := ip.Spec.ParentRef
		if ref == nil || ref.Resource != "services" || ref.Namespace != ns || ref.Name != svc.Name {
			t.Errorf("IPAddress parentRef = %+v, want services %s/%s", ref, ns, svc.Name)
		}
	})

	t.Run("requested IP is honoured, a taken one refused", func(t *testing.T) {
		want := "10.96.200.10"
		svc := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		svc.Spec.ClusterIP = want
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.ClusterIP != want {
			t.Errorf("clusterIP = %s, want %s", out.Spec.ClusterIP, want)
		}
		dup := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		dup.Spec.ClusterIP = want
		_, err = api.Create(ctx, dup, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.clusterIPs")

		// The kubernetes service's IP is taken too.
		dup.Spec.ClusterIP = kubernetesSvcIP
		_, err = api.Create(ctx, dup, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.clusterIPs")
	})

	t.Run("IP outside the range is refused", func(t *testing.T) {
		svc := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		svc.Spec.ClusterIP = "10.200.0.10"
		_, err := api.Create(ctx, svc, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.clusterIPs")
	})

	t.Run("IP is released on delete and reusable", func(t *testing.T) {
		want := "10.96.200.20"
		svc := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		svc.Spec.ClusterIP = want
		if _, err := api.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := api.Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.NetworkingV1().IPAddresses().Get(ctx, want, metav1.GetOptions{}); statusCode(err) != 404 {
			t.Errorf("IPAddress %s after its service was deleted: %v, want not found", want, err)
		}
		again := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		again.Spec.ClusterIP = want
		if _, err := api.Create(ctx, again, metav1.CreateOptions{}); err != nil {
			t.Errorf("reuse released IP %s: %v", want, err)
		}
	})

	t.Run("dry-run create allocates nothing", func(t *testing.T) {
		want := "10.96.200.30"
		svc := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		svc.Spec.ClusterIP = want
		if _, err := api.Create(ctx, svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.NetworkingV1().IPAddresses().Get(ctx, want, metav1.GetOptions{}); statusCode(err) != 404 {
			t.Errorf("IPAddress %s after a dry-run create: %v, want not found", want, err)
		}
		if _, err := api.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Errorf("create after dry run with the same IP: %v", err)
		}
	})

	t.Run("update keeps the IP when the client leaves it out", func(t *testing.T) {
		svc, err := api.Create(ctx, service(uniqueName("svc"), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip := svc.Spec.ClusterIP
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		out, err := api.Update(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.ClusterIP != ip {
			t.Errorf("clusterIP after update = %q, want %s kept", out.Spec.ClusterIP, ip)
		}
	})

	t.Run("clusterIP is immutable", func(t *testing.T) {
		svc, err := api.Create(ctx, service(uniqueName("svc"), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "10.96.200.40", []string{"10.96.200.40"}
		_, err = api.Update(ctx, svc, metav1.UpdateOptions{})
		wantStatus(t, err, 422) // needs api/validation
	})

	t.Run("change to ExternalName releases the IP", func(t *testing.T) {
		svc, err := api.Create(ctx, service(uniqueName("svc"), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip := svc.Spec.ClusterIP
		svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.Selector = "", nil, nil
		out, err := api.Update(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.ClusterIP != "" {
			t.Errorf("ExternalName service kept clusterIP %s", out.Spec.ClusterIP)
		}
		if _, err := client.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); statusCode(err) != 404 {
			t.Errorf("IPAddress %s after the change to ExternalName: %v, want not found", ip, err)
		}
	})

	t.Run("change from ExternalName allocates an IP", func(t *testing.T) {
		svc, err := api.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: uniqueName("svc")},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}}
		out, err := api.Update(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		addr, err := netip.ParseAddr(out.Spec.ClusterIP)
		if err != nil || !serviceRange.Contains(addr) {
			t.Fatalf("clusterIP after the change from ExternalName = %q, want one of %s", out.Spec.ClusterIP, serviceRange)
		}
		if _, err := client.NetworkingV1().IPAddresses().Get(ctx, out.Spec.ClusterIP, metav1.GetOptions{}); err != nil {
			t.Errorf("IPAddress %s: %v", out.Spec.ClusterIP, err)
		}
	})

	t.Run("IP is held until a finalizer lets the service go", func(t *testing.T) {
		svc := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		svc.Finalizers = []string{holdFinalizer}
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip := out.Spec.ClusterIP
		if err := api.Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); err != nil {
			t.Errorf("IPAddress %s of a service still held by a finalizer: %v", ip, err)
		}
		if _, err := api.Patch(ctx, svc.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); statusCode(err) != 404 {
			t.Errorf("IPAddress %s after the service went: %v, want not found", ip, err)
		}
	})

	t.Run("delete collection releases every IP", func(t *testing.T) {
		ns := newNamespace(t)
		var ips []string
		for range 3 {
			out, err := client.CoreV1().Services(ns).Create(ctx, service(uniqueName("svc"), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ips = append(ips, out.Spec.ClusterIP)
		}
		// client-go's typed Service client has no DeleteCollection; the server has.
		if err := dyn.Resource(core("services")).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, ip := range ips {
			if _, err := client.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); statusCode(err) != 404 {
				t.Errorf("IPAddress %s after delete collection: %v, want not found", ip, err)
			}
		}
	})

	t.Run("headless and ExternalName services get no IP", func(t *testing.T) {
		headless := service(uniqueName("svc"), corev1.ServiceTypeClusterIP)
		headless.Spec.ClusterIP = corev1.ClusterIPNone
		out, err := api.Create(ctx, headless, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.ClusterIP != corev1.ClusterIPNone || len(out.Spec.ClusterIPs) != 1 || out.Spec.ClusterIPs[0] != corev1.ClusterIPNone {
			t.Errorf("headless service: clusterIP %q clusterIPs %v, want None", out.Spec.ClusterIP, out.Spec.ClusterIPs)
		}
		ext := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: uniqueName("svc")},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
		}
		out, err = api.Create(ctx, ext, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.ClusterIP != "" || len(out.Spec.ClusterIPs) != 0 {
			t.Errorf("ExternalName service: clusterIP %q clusterIPs %v, want none", out.Spec.ClusterIP, out.Spec.ClusterIPs)
		}
	})
}

func TestServiceNodePorts(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	api := client.CoreV1().Services(ns)
	inRange := func(p int32) bool { return int(p) >= nodePortFirst && int(p) <= nodePortLast }

	t.Run("allocated in range", func(t *testing.T) {
		out, err := api.Create(ctx, service(uniqueName("np"), corev1.ServiceTypeNodePort), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p := out.Spec.Ports[0].NodePort; !inRange(p) {
			t.Errorf("nodePort = %d, want in %d-%d", p, nodePortFirst, nodePortLast)
		}
	})

	t.Run("requested port honoured, duplicate refused", func(t *testing.T) {
		svc := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		svc.Spec.Ports[0].NodePort = 30020
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.Ports[0].NodePort != 30020 {
			t.Errorf("nodePort = %d, want 30020", out.Spec.Ports[0].NodePort)
		}
		dup := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		dup.Spec.Ports[0].NodePort = 30020
		_, err = api.Create(ctx, dup, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.ports[0].nodePort")
	})

	t.Run("port outside the range refused", func(t *testing.T) {
		svc := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		svc.Spec.Ports[0].NodePort = 20000
		_, err := api.Create(ctx, svc, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.ports[0].nodePort")
	})

	t.Run("ports of one service are distinct", func(t *testing.T) {
		svc := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443), Protocol: corev1.ProtocolTCP})
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a, b := out.Spec.Ports[0].NodePort, out.Spec.Ports[1].NodePort
		if !inRange(a) || !inRange(b) || a == b {
			t.Errorf("nodePorts = %d, %d, want two distinct ports in range", a, b)
		}
	})

	t.Run("port released on delete and reusable", func(t *testing.T) {
		svc := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		svc.Spec.Ports[0].NodePort = 30030
		if _, err := api.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := api.Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		again := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		again.Spec.Ports[0].NodePort = 30030
		if _, err := api.Create(ctx, again, metav1.CreateOptions{}); err != nil {
			t.Errorf("reuse released nodePort 30030: %v", err)
		}
	})

	t.Run("update keeps the node port when the client leaves it out", func(t *testing.T) {
		svc, err := api.Create(ctx, service(uniqueName("np"), corev1.ServiceTypeNodePort), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		port := svc.Spec.Ports[0].NodePort
		svc.Spec.Ports[0].NodePort = 0
		out, err := api.Update(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.Ports[0].NodePort != port {
			t.Errorf("nodePort after update = %d, want %d kept", out.Spec.Ports[0].NodePort, port)
		}
	})

	t.Run("changing a node port releases the old one", func(t *testing.T) {
		svc := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		svc.Spec.Ports[0].NodePort = 30050
		svc, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.Ports[0].NodePort = 30051
		if _, err := api.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		again := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		again.Spec.Ports[0].NodePort = 30050
		if _, err := api.Create(ctx, again, metav1.CreateOptions{}); err != nil {
			t.Errorf("reuse node port 30050 given up by an update: %v", err)
		}
		taken := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		taken.Spec.Ports[0].NodePort = 30051
		_, err = api.Create(ctx, taken, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.ports[0].nodePort")
	})

	t.Run("type change allocates and releases ports", func(t *testing.T) {
		svc, err := api.Create(ctx, service(uniqueName("np"), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.Type = corev1.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = 30040
		svc, err = api.Update(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("ClusterIP to NodePort: %v", err)
		}
		if svc.Spec.Ports[0].NodePort != 30040 {
			t.Errorf("nodePort after type change = %d, want 30040", svc.Spec.Ports[0].NodePort)
		}
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		svc.Spec.Ports[0].NodePort = 0
		svc, err = api.Update(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("NodePort to ClusterIP: %v", err)
		}
		if svc.Spec.Ports[0].NodePort != 0 {
			t.Errorf("ClusterIP service kept nodePort %d", svc.Spec.Ports[0].NodePort)
		}
		again := service(uniqueName("np"), corev1.ServiceTypeNodePort)
		again.Spec.Ports[0].NodePort = 30040
		if _, err := api.Create(ctx, again, metav1.CreateOptions{}); err != nil {
			t.Errorf("reuse nodePort 30040 released by a type change: %v", err)
		}
	})

	t.Run("load balancer without node ports", func(t *testing.T) {
		svc := service(uniqueName("lb"), corev1.ServiceTypeLoadBalancer)
		svc.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.Ports[0].NodePort != 0 {
			t.Errorf("nodePort = %d with allocateLoadBalancerNodePorts=false, want none", out.Spec.Ports[0].NodePort)
		}
	})

	t.Run("load balancer with local traffic policy gets a health check port", func(t *testing.T) {
		svc := service(uniqueName("lb"), corev1.ServiceTypeLoadBalancer)
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !inRange(out.Spec.Ports[0].NodePort) || !inRange(out.Spec.HealthCheckNodePort) || out.Spec.HealthCheckNodePort == out.Spec.Ports[0].NodePort {
			t.Errorf("nodePort %d healthCheckNodePort %d, want two distinct ports in range", out.Spec.Ports[0].NodePort, out.Spec.HealthCheckNodePort)
		}
	})
}
