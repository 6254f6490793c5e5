package integration

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Small ranges make "allocations are rebuilt from storage" observable: the
// server must hand out exactly the addresses and ports left, no more.
const (
	restartServiceRange = "10.97.0.0/28" // 14 usable IPs, the first for kubernetes
	restartServiceIPs   = 14
	restartNodePorts    = "30000-30004"
	restartNodePortsN   = 5
)

// TestRestart runs its own server, since restarting the shared one would
// disturb other tests, on small service ranges. Restarts lose nothing: the
// objects, the allocations re-derived from storage, etcd's revision.
func TestRestart(t *testing.T) {
	srv := startOwnCluster(t, "--service-cluster-ip-range="+restartServiceRange, "--service-node-port-range="+restartNodePorts)
	// A restart of the built binary takes tens of seconds on a busy machine.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(srv.Config())
	dc := dynamic.NewForConfigOrDie(srv.Config())

	const ns = "restart"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createDefaultServiceAccount(t, cs, ns)
	// Before the restart: one object of several kinds, 3 ClusterIP and 3
	// NodePort services (7 IPs with kubernetes', 3 ports).
	type keptObject struct {
		gvr schema.GroupVersionResource
		obj *unstructured.Unstructured
	}
	var kept []keptObject
	for _, rc := range resourceCases {
		switch rc.id() {
		case "configmaps", "secrets", "deployments.apps", "pods", "events.events.k8s.io", "priorityclasses.scheduling.k8s.io", "leases.coordination.k8s.io":
		default:
			continue
		}
		obj := rc.object(t, rc.id() != "priorityclasses.scheduling.k8s.io", ns, rc.newName(), nil)
		if rc.id() == "configmaps" {
			obj.SetFinalizers([]string{holdFinalizer})
		}
		api := dc.Resource(rc.gvr).Namespace(obj.GetNamespace())
		created, err := api.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", rc.id(), err)
		}
		kept = append(kept, keptObject{rc.gvr, created})
	}
	var ips []string
	var ports []int32
	for i := range 6 {
		typ := corev1.ServiceTypeClusterIP
		if i%2 == 1 {
			typ = corev1.ServiceTypeNodePort
		}
		svc, err := cs.CoreV1().Services(ns).Create(ctx, service(fmt.Sprintf("before-%d", i), typ), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create service %d: %v", i, err)
		}
		ips = append(ips, svc.Spec.ClusterIP)
		if typ == corev1.ServiceTypeNodePort {
			ports = append(ports, svc.Spec.Ports[0].NodePort)
		}
		u, err := dc.Resource(core("services")).Namespace(ns).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, keptObject{core("services"), u})
	}
	nsObj, err := dc.Resource(core("namespaces")).Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kept = append(kept, keptObject{core("namespaces"), nsObj})

	// At the process depth the harness must really have started a new
	// process, or nothing here tests a restart.
	type pider interface{ PID() int }
	p, isProcess := srv.(pider)
	var oldPID int
	if isProcess {
		oldPID = p.PID()
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if isProcess && p.PID() == oldPID {
		t.Fatalf("restart kept pid %d", oldPID)
	}

	t.Run("objects keep uid and resourceVersion", func(t *testing.T) {
		for _, k := range kept {
			before := k.obj
			after, err := dc.Resource(k.gvr).Namespace(before.GetNamespace()).Get(ctx, before.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Errorf("%s %s after restart: %v", before.GetKind(), before.GetName(), err)
				continue
			}
			if after.GetUID() != before.GetUID() || after.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("%s %s: uid/rv %s/%s after restart, want %s/%s", before.GetKind(), before.GetName(),
					after.GetUID(), after.GetResourceVersion(), before.GetUID(), before.GetResourceVersion())
			}
			if !reflect.DeepEqual(after.Object["data"], before.Object["data"]) {
				t.Errorf("%s %s: data %v after restart, want %v", before.GetKind(), before.GetName(), after.Object["data"], before.Object["data"])
			}
		}
	})

	t.Run("writes after the restart continue the revision sequence", func(t *testing.T) {
		// A server that reused etcd's revisions would hand out
		// resourceVersions clients have already seen.
		cm, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, kept[0].obj.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"after":"restart"}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		newRV, err := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		if err != nil {
			t.Fatalf("resourceVersion %q is not etcd's revision: %v", cm.ResourceVersion, err)
		}
		for _, k := range kept {
			if old, _ := strconv.ParseUint(k.obj.GetResourceVersion(), 10, 64); newRV <= old {
				t.Errorf("resourceVersion of a write after restart (%d) is not beyond %s %s's from before (%d)", newRV, k.obj.GetKind(), k.obj.GetName(), old)
			}
		}
	})

	t.Run("watch from before the restart is 410 Gone", func(t *testing.T) {
		// The watch cache starts at the storage's version after a restart;
		// older versions are gone, and clients relist.
		w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: kept[0].obj.GetResourceVersion()})
		if err != nil {
			wantStatus(t, err, 410)
			return
		}
		defer w.Stop()
		evs := record(w).waitFor(t, func(evs []watch.Event) bool { return len(evs) >= 1 })
		st, ok := evs[0].Object.(*metav1.Status)
		if evs[0].Type != watch.Error || !ok || st.Code != 410 {
			t.Errorf("watch from a pre-restart resourceVersion gave %s %v, want ERROR with a 410 status", evs[0].Type, evs[0].Object)
		}
	})

	t.Run("kubernetes service is still the first IP", func(t *testing.T) {
		svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil || svc.Spec.ClusterIP != "10.97.0.1" {
			t.Fatalf("kubernetes service after restart: %v (%v)", err, svc)
		}
	})

	t.Run("taken IPs and ports stay taken", func(t *testing.T) {
		svc := service("taken-ip", corev1.ServiceTypeClusterIP)
		svc.Spec.ClusterIP = ips[0]
		_, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		se := wantStatus(t, err, 422)
		wantCause(t, se, "spec.clusterIPs")
		// Upstream's words, which kubectl prints.
		if !strings.Contains(se.ErrStatus.Message, "provided IP is already allocated") {
			t.Errorf("service on taken IP %s: message %q, want upstream's \"provided IP is already allocated\"", ips[0], se.ErrStatus.Message)
		}
		create := kubectlCmd(srv, "create", "-f", "-")
		create.Stdin = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"steal","namespace":"` + ns + `"},
			"spec":{"clusterIP":"` + ips[0] + `","ports":[{"port":80}]}}`
		if res := create.Run(t); res.ExitCode != 1 || !strings.Contains(res.Stderr, "provided IP is already allocated") {
			t.Errorf("kubectl create of a service on taken IP %s: want exit 1 and \"provided IP is already allocated\", got %s", ips[0], res)
		}
		svc = service("taken-port", corev1.ServiceTypeNodePort)
		svc.Spec.Ports[0].NodePort = ports[0]
		_, err = cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.ports[0].nodePort")
	})

	t.Run("new services get the addresses and ports left", func(t *testing.T) {
		usedIPs := map[string]bool{"10.97.0.1": true}
		for _, ip := range ips {
			usedIPs[ip] = true
		}
		usedPorts := map[int32]bool{}
		for _, p := range ports {
			usedPorts[p] = true
		}
		for i := 0; len(usedPorts) < restartNodePortsN; i++ {
			svc, err := cs.CoreV1().Services(ns).Create(ctx, service(fmt.Sprintf("after-np-%d", i), corev1.ServiceTypeNodePort), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("NodePort service %d after restart (%d of %d ports used): %v", i, len(usedPorts), restartNodePortsN, err)
			}
			p := svc.Spec.Ports[0].NodePort
			if usedPorts[p] || usedIPs[svc.Spec.ClusterIP] {
				t.Errorf("service %s got taken port %d or IP %s", svc.Name, p, svc.Spec.ClusterIP)
			}
			usedPorts[p], usedIPs[svc.Spec.ClusterIP] = true, true
		}
		_, err := cs.CoreV1().Services(ns).Create(ctx, service("no-port-left", corev1.ServiceTypeNodePort), metav1.CreateOptions{})
		if err == nil {
			t.Errorf("NodePort service created with the port range full")
		}
		// The refused service must not have kept its IP: fill the rest.
		for i := 0; len(usedIPs) < restartServiceIPs; i++ {
			svc, err := cs.CoreV1().Services(ns).Create(ctx, service(fmt.Sprintf("after-ip-%d", i), corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("ClusterIP service %d after restart (%d of %d IPs used): %v", i, len(usedIPs), restartServiceIPs, err)
			}
			if usedIPs[svc.Spec.ClusterIP] {
				t.Errorf("service %s got taken IP %s", svc.Name, svc.Spec.ClusterIP)
			}
			usedIPs[svc.Spec.ClusterIP] = true
		}
		_, err = cs.CoreV1().Services(ns).Create(ctx, service("no-ip-left", corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
		if err == nil {
			t.Errorf("service created with the IP range full")
		}
	})

	t.Run("deleted kubernetes service comes back", func(t *testing.T) {
		// Upstream's bootstrap controller keeps default/kubernetes, checking
		// every 10 seconds.
		if err := cs.CoreV1().Services("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		var last error
		deadline := time.Now().Add(25 * time.Second)
		for time.Now().Before(deadline) {
			svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err == nil && svc.Spec.ClusterIP == "10.97.0.1" {
				return
			}
			last = err
			time.Sleep(250 * time.Millisecond)
		}
		t.Errorf("default/kubernetes not recreated with 10.97.0.1 within 25s (last: %v)", last)
	})

	t.Run("finalizer still holds after restart", func(t *testing.T) {
		cm := kept[0].obj
		if cm.GetKind() != "ConfigMap" {
			t.Fatalf("first kept object is %s, want the ConfigMap", cm.GetKind())
		}
		api := cs.CoreV1().ConfigMaps(ns)
		if err := api.Delete(ctx, cm.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := api.Get(ctx, cm.GetName(), metav1.GetOptions{}); err != nil {
			t.Fatalf("configmap with a finalizer gone: %v", err)
		}
		if _, err := api.Patch(ctx, cm.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := api.Get(ctx, cm.GetName(), metav1.GetOptions{})
		wantStatus(t, err, 404)
	})
}
