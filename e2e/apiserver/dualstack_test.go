package apiserver_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
)

// The dual-stack server's ranges: IPv4 primary, as kubeadm writes them.
const (
	dualV4 = "10.100.0.0/16"
	dualV6 = "fd00:100::/108"
)

// causeFields are the field paths of an Invalid error's causes, each with
// its message.
func causeFields(err error) []string {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil {
		return nil
	}
	var out []string
	for _, c := range se.ErrStatus.Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

func wantInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error = %v, want Invalid", err)
	}
	if got := causeFields(err); !slices.Equal(got, want) {
		t.Fatalf("causes = %q, want %q", got, want)
	}
}

func dualSvc(name string, policy corev1.IPFamilyPolicy) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			IPFamilyPolicy: &policy,
			Selector:       map[string]string{"app": name},
			Ports:          []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
}

// wantIPs checks a Service holds one address per family, each in its range
// and each backed by an IPAddress object naming the Service.
func wantIPs(t *testing.T, cs kubernetes.Interface, svc *corev1.Service, families ...corev1.IPFamily) {
	t.Helper()
	if !slices.Equal(svc.Spec.IPFamilies, families) || len(svc.Spec.ClusterIPs) != len(families) || svc.Spec.ClusterIP != svc.Spec.ClusterIPs[0] {
		t.Fatalf("service %s: clusterIP %s clusterIPs %v families %v, want families %v", svc.Name, svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, families)
	}
	for i, s := range svc.Spec.ClusterIPs {
		ip := netip.MustParseAddr(s)
		cidr := dualV4
		if families[i] == corev1.IPv6Protocol {
			cidr = dualV6
		}
		if !netip.MustParsePrefix(cidr).Contains(ip) {
			t.Errorf("clusterIPs[%d] %s is not in %s", i, ip, cidr)
		}
		obj, err := cs.NetworkingV1().IPAddresses().Get(context.Background(), s, metav1.GetOptions{})
		if err != nil {
			t.Errorf("IPAddress %s: %v", s, err)
		} else if ref := obj.Spec.ParentRef; ref == nil || ref.Name != svc.Name || ref.Namespace != svc.Namespace {
			t.Errorf("IPAddress %s parent %+v, want service %s/%s", s, ref, svc.Namespace, svc.Name)
		}
	}
}

// wantReleased waits for the IPAddress objects of ips to go.
func wantReleased(t *testing.T, cs kubernetes.Interface, ips ...string) {
	t.Helper()
	for _, ip := range ips {
		err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("IPAddress %s still exists", ip)
		}
	}
}

// TestDualStackServices runs a server with an IPv4 and an IPv6 service range
// and drives Services through it with client-go and kubectl.
func TestDualStackServices(t *testing.T) {
	ds := testcluster.StartAPIServer(t, testcluster.APIServerOptions{ServiceClusterIPRange: dualV4 + "," + dualV6})
	cs := ds.Clientset(t)
	ctx := context.Background()
	kubectl := func(t *testing.T, args ...string) testcluster.Result {
		t.Helper()
		res := ds.Kubectl(t, args...)
		if res.ExitCode != 0 {
			t.Fatalf("kubectl %s failed: %s", strings.Join(args, " "), res)
		}
		return res
	}
	const ns = "dualstack"
	kubectl(t, "create", "namespace", ns)
	api := cs.CoreV1().Services(ns)

	t.Run("default ServiceCIDR and kubernetes Service", func(t *testing.T) {
		var cidrs []string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			sc, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			cidrs = sc.Spec.CIDRs
			return true, nil
		})
		if err != nil || !slices.Equal(cidrs, []string{dualV4, dualV6}) {
			t.Fatalf("ServiceCIDR kubernetes: %v, cidrs %v, want [%s %s]", err, cidrs, dualV4, dualV6)
		}
		// As upstream, the kubernetes Service is single-stack on the
		// primary range's first address.
		svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if svc.Spec.ClusterIP != "10.100.0.1" || !slices.Equal(svc.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
			t.Fatalf("kubernetes Service clusterIPs %v families %v", svc.Spec.ClusterIPs, svc.Spec.IPFamilies)
		}
	})

	t.Run("PreferDualStack gets an address per family", func(t *testing.T) {
		out, err := api.Create(ctx, dualSvc("prefer", corev1.IPFamilyPolicyPreferDualStack), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantIPs(t, cs, out, corev1.IPv4Protocol, corev1.IPv6Protocol)
		// kubectl shows both.
		got := kubectl(t, "-n", ns, "get", "service", "prefer", "-o", "jsonpath={.spec.clusterIPs}").Stdout
		if !strings.Contains(got, out.Spec.ClusterIPs[0]) || !strings.Contains(got, out.Spec.ClusterIPs[1]) {
			t.Errorf("kubectl clusterIPs %s, want %v", got, out.Spec.ClusterIPs)
		}
	})

	t.Run("RequireDualStack IPv6 first", func(t *testing.T) {
		svc := dualSvc("v6first", corev1.IPFamilyPolicyRequireDualStack)
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantIPs(t, cs, out, corev1.IPv6Protocol, corev1.IPv4Protocol)
	})

	t.Run("headless PreferDualStack has both families and no address", func(t *testing.T) {
		svc := dualSvc("headless", corev1.IPFamilyPolicyPreferDualStack)
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Spec.ClusterIPs, []string{corev1.ClusterIPNone}) || !slices.Equal(out.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}) {
			t.Fatalf("headless: clusterIPs %v families %v", out.Spec.ClusterIPs, out.Spec.IPFamilies)
		}
	})

	t.Run("upgrade and downgrade with kubectl patch", func(t *testing.T) {
		out, err := api.Create(ctx, dualSvc("updown", corev1.IPFamilyPolicySingleStack), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantIPs(t, cs, out, corev1.IPv4Protocol)
		primary := out.Spec.ClusterIP

		kubectl(t, "-n", ns, "patch", "service", "updown", "-p", `{"spec":{"ipFamilyPolicy":"PreferDualStack"}}`)
		up, err := api.Get(ctx, "updown", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantIPs(t, cs, up, corev1.IPv4Protocol, corev1.IPv6Protocol)
		if up.Spec.ClusterIP != primary {
			t.Fatalf("upgrade moved the primary address from %s to %s", primary, up.Spec.ClusterIP)
		}

		// The primary family can not change.
		res := ds.Kubectl(t, "-n", ns, "patch", "service", "updown", "-p", `{"spec":{"ipFamilies":["IPv6","IPv4"]}}`)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "spec.clusterIPs[0]: Invalid value: \""+primary+"\": expected an IPv6 value as indicated by `ipFamilies[0]`") {
			t.Fatalf("primary family change: %s", res)
		}
		// Dropping the secondary needs SingleStack.
		res = ds.Kubectl(t, "-n", ns, "patch", "service", "updown", "--type=json", "-p",
			`[{"op":"remove","path":"/spec/clusterIPs/1"},{"op":"remove","path":"/spec/ipFamilies/1"}]`)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, `spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary cluster IP`) {
			t.Fatalf("release without SingleStack: %s", res)
		}

		kubectl(t, "-n", ns, "patch", "service", "updown", "-p", `{"spec":{"ipFamilyPolicy":"SingleStack"}}`)
		down, err := api.Get(ctx, "updown", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantIPs(t, cs, down, corev1.IPv4Protocol)
		if down.Spec.ClusterIP != primary {
			t.Fatalf("downgrade moved the primary address from %s to %s", primary, down.Spec.ClusterIP)
		}
		wantReleased(t, cs, up.Spec.ClusterIPs[1])
	})

	t.Run("requested addresses are checked per family and reusable after delete", func(t *testing.T) {
		want := []string{"10.100.200.10", "fd00:100::2:10"}
		svc := dualSvc("fixed", corev1.IPFamilyPolicyRequireDualStack)
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = want[0], want
		out, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Spec.ClusterIPs, want) {
			t.Fatalf("clusterIPs %v, want %v", out.Spec.ClusterIPs, want)
		}
		wantIPs(t, cs, out, corev1.IPv4Protocol, corev1.IPv6Protocol)

		taken := dualSvc("taken", corev1.IPFamilyPolicyRequireDualStack)
		taken.Spec.ClusterIP, taken.Spec.ClusterIPs = "10.100.200.11", []string{"10.100.200.11", want[1]}
		_, err = api.Create(ctx, taken, metav1.CreateOptions{})
		wantInvalid(t, err, `spec.clusterIPs: Invalid value: ["10.100.200.11","fd00:100::2:10"]: failed to allocate IP fd00:100::2:10: provided IP is already allocated`)
		// The IPv4 address taken before the IPv6 one failed went back.
		wantReleased(t, cs, "10.100.200.11")

		outside := dualSvc("outside", corev1.IPFamilyPolicyRequireDualStack)
		outside.Spec.ClusterIP, outside.Spec.ClusterIPs = "10.100.200.12", []string{"10.100.200.12", "fd00:200::1"}
		_, err = api.Create(ctx, outside, metav1.CreateOptions{})
		wantInvalid(t, err, `spec.clusterIPs: Invalid value: ["10.100.200.12","fd00:200::1"]: failed to allocate IP fd00:200::1: the provided IP (fd00:200::1) is not in the valid range. The range of valid IPs is `+dualV6)

		kubectl(t, "-n", ns, "delete", "service", "fixed")
		wantReleased(t, cs, want...)
		again := dualSvc("again", corev1.IPFamilyPolicyRequireDualStack)
		again.Spec.ClusterIP, again.Spec.ClusterIPs = want[0], want
		out, err = api.Create(ctx, again, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("reusing released addresses: %v", err)
		}
		wantIPs(t, cs, out, corev1.IPv4Protocol, corev1.IPv6Protocol)
	})
}

// TestDualStackRefusedOnSingleStack asks the shared single-stack server for
// what only a dual-stack cluster can give.
func TestDualStackRefusedOnSingleStack(t *testing.T) {
	ns := newNamespace(t, "singlestack")
	cs := srv.Clientset(t)
	api := cs.CoreV1().Services(ns)
	ctx := context.Background()

	_, err := api.Create(ctx, dualSvc("require", corev1.IPFamilyPolicyRequireDualStack), metav1.CreateOptions{})
	wantInvalid(t, err, `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`)

	both := dualSvc("both", corev1.IPFamilyPolicyPreferDualStack)
	both.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	_, err = api.Create(ctx, both, metav1.CreateOptions{})
	wantInvalid(t, err, `spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster`)

	// kubectl prints the same field path.
	res := srv.KubectlStdin(t, `apiVersion: v1
kind: Service
metadata:
  name: require
  namespace: `+ns+`
spec:
  ipFamilyPolicy: RequireDualStack
  selector: {app: require}
  ports: [{port: 80}]
`, "apply", "-f", "-")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`) {
		t.Fatalf("kubectl apply RequireDualStack: %s", res)
	}

	// PreferDualStack settles for the one family.
	out, err := api.Create(ctx, dualSvc("prefer", corev1.IPFamilyPolicyPreferDualStack), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Spec.ClusterIPs) != 1 || !slices.Equal(out.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) || *out.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack {
		t.Fatalf("PreferDualStack on single-stack: clusterIPs %v families %v", out.Spec.ClusterIPs, out.Spec.IPFamilies)
	}
}
