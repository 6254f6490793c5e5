package cloudcontrollermanager_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"

	"trireme.dev/componentbase/testwait"
)

const (
	binaryName = "trireme-cloud-controller-manager"
	timeout    = 60 * time.Second
	// The pools are TEST-NET-1 (RFC 5737): never a real network's.
	defaultPool = "192.0.2.0/30"
	extraPool   = "192.0.2.8/30"
	uninitTaint = "node.cloudprovider.kubernetes.io/uninitialized"
)

// inventory is the --cloud-config the suite starts with: node-1 listed
// with everything, node-3 listed and shut down, node-2 unlisted (its zone
// comes from its labels).
const inventory = `apiVersion: cloudconfig.config.trireme.dev/v1alpha1
kind: CloudConfiguration
removeUnlistedNodes: %v
machines:
- name: ccm-node-1
  providerID: trireme://rack-a/ccm-node-1
  zone: zone-a
  region: region-1
  instanceType: vm.small
  addresses:
  - {type: InternalIP, address: 10.10.0.1}
  - {type: ExternalIP, address: 198.51.100.1}
- name: ccm-node-3
  shutdown: true
loadBalancer:
  pools:
  - name: default
    addresses: ["` + defaultPool + `"]
`

// ccm is one run of the binary.
type ccm struct {
	proc *testcluster.Process
	log  *testcluster.LogBuffer
	port int
}

func startCCM(t testing.TB, srv *testcluster.APIServer, config string, extraArgs ...string) *ccm {
	t.Helper()
	bin, err := testcluster.Binary(binaryName)
	if err != nil {
		t.Fatal(err)
	}
	c := &ccm{log: &testcluster.LogBuffer{}, port: freeport.For(t)}
	kc := srv.KubeconfigPath()
	args := []string{"--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--cloud-config", config, "--secure-port", fmt.Sprint(c.port), "--bind-address", "127.0.0.1",
		"--leader-elect=true", "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s",
		"--node-monitor-period=1s"}
	args = append(args, extraArgs...)
	c.proc, err = testcluster.StartProcess(bin, args, c.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop(t) })
	return c
}

func (c *ccm) stop(t testing.TB) {
	if c.proc == nil {
		return
	}
	if err := c.proc.Stop(10 * time.Second); err != nil {
		t.Logf("stop %s: %v", binaryName, err)
	}
	if t.Failed() {
		t.Logf("%s log (last lines):\n%s", binaryName, c.log.Tail(80))
	}
	c.proc = nil
}

// installCRD creates the addons chart's AddressPool CRD, as the release does.
func installCRD(t testing.TB, srv *testcluster.APIServer) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testcluster.RepoRoot(), "charts", "trireme-addons", "charts", "loadbalancer", "templates", "addresspools-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		t.Fatal(err)
	}
	cs := apiextensionsclient.NewForConfigOrDie(srv.Config())
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, timeout, "CRD established", func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// registerNode creates a Node as a kubelet with --cloud-provider=external
// and --node-ip does, NotReady when ready is false.
func registerNode(t testing.TB, cs kubernetes.Interface, name, ip string, labels map[string]string, ready bool) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{"alpha.kubernetes.io/provided-node-ip": ip}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: uninitTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
	}
	n, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "Test", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedConfigStopsAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	bin, err := testcluster.Binary(binaryName)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "cloud.yaml")
	bad := strings.Replace(fmt.Sprintf(inventory, false), "  zone: zone-a\n", "  zone: zone-a\n  rack: 7\n", 1)
	if err := os.WriteFile(config, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--kubeconfig=/nonexistent", "--cloud-config", config).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `line 8: unknown field "machines[0].rack"`) {
		t.Fatalf("exit %v, output:\n%s\nwant a failure naming line 8", err, out)
	}
}

func TestCloudControllerManager(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	srv := testcluster.StartAPIServer(t, testcluster.APIServerOptions{})
	cs := srv.Clientset(t)
	dyn := dynamic.NewForConfigOrDie(srv.Config())
	pools := dyn.Resource(lbv1alpha1.AddressPoolResource)
	installCRD(t, srv)
	ctx := context.Background()

	config := filepath.Join(t.TempDir(), "cloud.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, inventory, false), 0o600); err != nil {
		t.Fatal(err)
	}
	registerNode(t, cs, "ccm-node-1", "10.10.0.1", nil, true)
	registerNode(t, cs, "ccm-node-2", "10.10.0.2", map[string]string{corev1.LabelTopologyZone: "zone-b", corev1.LabelTopologyRegion: "region-1"}, false)
	registerNode(t, cs, "ccm-node-3", "10.10.0.3", nil, false)
	c := startCCM(t, srv, config)
	suite := t // the CCM restarted by a subtest outlives it

	t.Run("serving", func(t *testing.T) {
		waitHealthy(t, c)
		testwait.For(t, timeout, "Lease kube-system/cloud-controller-manager", func(ctx context.Context) (bool, error) {
			l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "cloud-controller-manager", metav1.GetOptions{})
			return err == nil && ptr.Deref(l.Spec.HolderIdentity, "") != "", err
		})
	})

	t.Run("nodes initialized", func(t *testing.T) {
		testwait.For(t, timeout, "ccm-node-1 initialized from the inventory", func(ctx context.Context) (bool, error) {
			n, err := cs.CoreV1().Nodes().Get(ctx, "ccm-node-1", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if hasTaint(n, uninitTaint) {
				return false, fmt.Errorf("still tainted")
			}
			want := map[string]string{corev1.LabelTopologyZone: "zone-a", corev1.LabelTopologyRegion: "region-1", corev1.LabelInstanceTypeStable: "vm.small"}
			for k, v := range want {
				if n.Labels[k] != v {
					return false, fmt.Errorf("label %s=%q, want %q", k, n.Labels[k], v)
				}
			}
			if n.Spec.ProviderID != "trireme://rack-a/ccm-node-1" {
				return false, fmt.Errorf("providerID %q", n.Spec.ProviderID)
			}
			if !slices.Contains(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "198.51.100.1"}) {
				return false, fmt.Errorf("addresses %v", n.Status.Addresses)
			}
			return true, nil
		})
		testwait.For(t, timeout, "ccm-node-2 initialized from its labels", func(ctx context.Context) (bool, error) {
			n, err := cs.CoreV1().Nodes().Get(ctx, "ccm-node-2", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if hasTaint(n, uninitTaint) || n.Spec.ProviderID != "trireme://ccm-node-2" || n.Labels[corev1.LabelTopologyZone] != "zone-b" {
				return false, fmt.Errorf("taints %v, providerID %q, labels %v", n.Spec.Taints, n.Spec.ProviderID, n.Labels)
			}
			return true, nil
		})
		testwait.For(t, timeout, "ccm-node-3, shut down, gets the shutdown taint", func(ctx context.Context) (bool, error) {
			n, err := cs.CoreV1().Nodes().Get(ctx, "ccm-node-3", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return hasTaint(n, "node.cloudprovider.kubernetes.io/shutdown"), fmt.Errorf("taints %v", n.Spec.Taints)
		})
	})

	ns := "ccm-lb"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}

	t.Run("address from the file's pool", func(t *testing.T) {
		createLB(t, cs, ns, "web", nil, nil)
		first["web"] = waitIngress(t, cs, ns, "web")
		if first["web"] != "192.0.2.0" {
			t.Fatalf("web got %s, want the pool's first address 192.0.2.0", first["web"])
		}
	})

	t.Run("address from an AddressPool by Service labels", func(t *testing.T) {
		pool := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": lbv1alpha1.SchemeGroupVersion.String(), "kind": lbv1alpha1.KindAddressPool,
			"metadata": map[string]any{"name": "extra"},
			"spec": map[string]any{"addresses": []any{extraPool}, "autoAssign": false,
				"serviceSelector": map[string]any{"matchLabels": map[string]any{"pool": "extra"}}},
		}}
		if _, err := pools.Create(ctx, pool, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createLB(t, cs, ns, "edge", map[string]string{"pool": "extra"}, map[string]string{lbv1alpha1.AnnotationAddressPool: "extra"})
		if ip := waitIngress(t, cs, ns, "edge"); ip != "192.0.2.8" {
			t.Fatalf("edge got %s, want 192.0.2.8 from pool extra", ip)
		}
		testwait.For(t, timeout, "pool extra's status counts the address", func(ctx context.Context) (bool, error) {
			p, err := pools.Get(ctx, "extra", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			used, _, _ := unstructured.NestedInt64(p.Object, "status", "assignedIPv4")
			free, _, _ := unstructured.NestedInt64(p.Object, "status", "availableIPv4")
			return used == 1 && free == 3, fmt.Errorf("status %v", p.Object["status"])
		})
	})

	t.Run("invalid and overlapping pools refused", func(t *testing.T) {
		bad := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": lbv1alpha1.SchemeGroupVersion.String(), "kind": lbv1alpha1.KindAddressPool,
			"metadata": map[string]any{"name": "bad"}, "spec": map[string]any{"addresses": []any{"192.0.2.1/30"}},
		}}
		_, err := pools.Create(ctx, bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.addresses[0]") {
			t.Fatalf("a CIDR with host bits: %v, want Invalid naming spec.addresses[0]", err)
		}
		overlap := bad.DeepCopy()
		overlap.SetName("overlap")
		_ = unstructured.SetNestedStringSlice(overlap.Object, []string{"192.0.2.2-192.0.2.5"}, "spec", "addresses")
		if _, err := pools.Create(ctx, overlap, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, timeout, "overlapping pool marked Valid=False", func(ctx context.Context) (bool, error) {
			p, err := pools.Get(ctx, "overlap", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
			for _, c := range conds {
				m := c.(map[string]any)
				if m["type"] == "Valid" && m["status"] == "False" && m["reason"] == "Overlap" {
					return true, nil
				}
			}
			return false, fmt.Errorf("conditions %v", conds)
		})
	})

	t.Run("exhaustion, release on delete and type change", func(t *testing.T) {
		createLB(t, cs, ns, "b", nil, nil)
		createLB(t, cs, ns, "c", nil, nil)
		createLB(t, cs, ns, "d", nil, nil)
		for _, n := range []string{"b", "c", "d"} {
			first[n] = waitIngress(t, cs, ns, n)
		}
		createLB(t, cs, ns, "pending", nil, nil)
		testwait.For(t, timeout, "Warning Event naming the exhausted pool", func(ctx context.Context) (bool, error) {
			evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=pending"})
			if err != nil {
				return false, err
			}
			for _, e := range evs.Items {
				if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, `address pool "default"`) {
					return true, nil
				}
			}
			return false, fmt.Errorf("events %v", evs.Items)
		})
		if s, _ := cs.CoreV1().Services(ns).Get(ctx, "pending", metav1.GetOptions{}); len(s.Status.LoadBalancer.Ingress) > 0 {
			t.Fatalf("pending got %v from an exhausted pool", s.Status.LoadBalancer.Ingress)
		}
		// b stops being a LoadBalancer: its address goes to pending.
		s, err := cs.CoreV1().Services(ns).Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Spec.Type = corev1.ServiceTypeClusterIP
		s.Spec.Ports[0].NodePort = 0
		if _, err := cs.CoreV1().Services(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if ip := waitIngress(t, cs, ns, "pending"); ip != first["b"] {
			t.Fatalf("pending got %s, want b's released %s", ip, first["b"])
		}
		// c is deleted: its address is free again.
		if err := cs.CoreV1().Services(ns).Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, timeout, "c gone (its finalizer removed)", func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Services(ns).Get(ctx, "c", metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
		createLB(t, cs, ns, "e", nil, nil)
		if ip := waitIngress(t, cs, ns, "e"); ip != first["c"] {
			t.Fatalf("e got %s, want c's released %s", ip, first["c"])
		}
	})

	t.Run("restart rebuilds allocations", func(t *testing.T) {
		c.stop(t)
		// Free one address while the CCM is down, then restart: the new
		// Service may take only that one.
		if err := cs.CoreV1().Services(ns).Delete(ctx, "d", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		c = startCCM(suite, srv, config)
		createLB(t, cs, ns, "after-restart", nil, nil)
		if ip := waitIngress(t, cs, ns, "after-restart"); ip != first["d"] {
			t.Fatalf("after-restart got %s, want %s (d's, the only free one)", ip, first["d"])
		}
		if ip := waitIngress(t, cs, ns, "web"); ip != first["web"] {
			t.Fatalf("web moved from %s to %s across the restart", first["web"], ip)
		}
	})

	t.Run("shared IPs: one address for one key and different ports", func(t *testing.T) {
		share := func(key string) map[string]string {
			return map[string]string{lbv1alpha1.AnnotationAddressPool: "extra", lbv1alpha1.AnnotationAllowSharedIP: key}
		}
		extra := map[string]string{"pool": "extra"}
		createLB(t, cs, ns, "share-http", extra, share("front"), 80)
		createLB(t, cs, ns, "share-https", extra, share("front"), 443)
		createLB(t, cs, ns, "share-clash", extra, share("front"), 80)
		createLB(t, cs, ns, "share-other", extra, share("back"), 443)
		plain, secure := waitIngress(t, cs, ns, "share-http"), waitIngress(t, cs, ns, "share-https")
		if plain != secure {
			t.Fatalf("share-http has %s and share-https %s: one key, different ports must share", plain, secure)
		}
		clash, other := waitIngress(t, cs, ns, "share-clash"), waitIngress(t, cs, ns, "share-other")
		if clash == plain {
			t.Fatalf("share-clash got %s, shared with share-http on the same port 80", clash)
		}
		if other == plain || other == clash {
			t.Fatalf("share-other (key back) got %s, held under key front", other)
		}
	})

	t.Run("leader killed: the standby takes over and reassigns nothing", func(t *testing.T) {
		before := ingresses(t, cs, ns)
		standby := startCCM(suite, srv, config)
		waitHealthy(t, standby)
		lease := func(ctx context.Context) (string, error) {
			l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "cloud-controller-manager", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return ptr.Deref(l.Spec.HolderIdentity, ""), nil
		}
		leader, err := lease(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.proc.Kill(); err != nil {
			t.Fatal(err)
		}
		c.proc = nil
		c = standby
		testwait.For(t, timeout, "the standby holds the Lease", func(ctx context.Context) (bool, error) {
			holder, err := lease(ctx)
			return err == nil && holder != "" && holder != leader, fmt.Errorf("holder %q (was %q): %v", holder, leader, err)
		})
		// The default pool is full: a new Service waits rather than get an
		// address someone holds, and takes the one a deletion frees.
		createLB(t, cs, ns, "after-failover", nil, nil)
		if err := cs.CoreV1().Services(ns).Delete(ctx, "pending", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if ip := waitIngress(t, cs, ns, "after-failover"); ip != before["pending"] {
			t.Fatalf("after-failover got %s, want %s (pending's, the only free one)", ip, before["pending"])
		}
		delete(before, "pending")
		after := ingresses(t, cs, ns)
		for name, ip := range before {
			if after[name] != ip {
				t.Errorf("%s had %s before the failover and %s after", name, ip, after[name])
			}
		}
	})

	t.Run("reload: unlisted NotReady node deleted", func(t *testing.T) {
		if err := os.WriteFile(config, []byte("not: [valid"), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // a reload of a bad file keeps the last good one
		if _, err := cs.CoreV1().Nodes().Get(ctx, "ccm-node-2", metav1.GetOptions{}); err != nil {
			t.Fatalf("ccm-node-2 after a bad reload: %v", err)
		}
		if err := os.WriteFile(config, fmt.Appendf(nil, inventory, true), 0o600); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, timeout, "ccm-node-2 deleted", func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Nodes().Get(ctx, "ccm-node-2", metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
		if _, err := cs.CoreV1().Nodes().Get(ctx, "ccm-node-1", metav1.GetOptions{}); err != nil {
			t.Fatalf("ccm-node-1, listed and Ready, is gone too: %v", err)
		}
	})
}

// waitHealthy waits for c's /healthz to answer 200.
func waitHealthy(t *testing.T, c *ccm) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	testwait.For(t, timeout, "GET /healthz", func(context.Context) (bool, error) {
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", c.port))
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("status %s", resp.Status)
	})
}

// ingresses maps each LoadBalancer Service of ns that has an address to it.
func ingresses(t *testing.T, cs kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	list, err := cs.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		if in := s.Status.LoadBalancer.Ingress; len(in) > 0 {
			out[s.Name] = in[0].IP
		}
	}
	return out
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

// createLB creates a LoadBalancer Service on ports (80 when none is given).
func createLB(t *testing.T, cs kubernetes.Interface, ns, name string, labels, annotations map[string]string, ports ...int32) {
	t.Helper()
	if len(ports) == 0 {
		ports = []int32{80}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name}},
	}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprint("p", p), Port: p, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP})
	}
	if _, err := cs.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitIngress waits for a Service's one ingress address, ipMode VIP.
func waitIngress(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	var ip string
	testwait.For(t, timeout, "Service "+name+" gets an address", func(ctx context.Context) (bool, error) {
		s, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		in := s.Status.LoadBalancer.Ingress
		if len(in) != 1 {
			return false, fmt.Errorf("ingress %v", in)
		}
		if ptr.Deref(in[0].IPMode, "") != corev1.LoadBalancerIPModeVIP {
			return false, fmt.Errorf("ipMode %v", in[0].IPMode)
		}
		ip = in[0].IP
		return true, nil
	})
	return ip
}
