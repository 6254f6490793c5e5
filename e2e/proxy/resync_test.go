package proxy_test

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestResyncAndRestart runs the proxy past its periodic full sync and
// through a restart over the table it left, for both back ends: every
// full sync after the first must work, so a Service created after one
// must be reached, and a restarted proxy must take over the rules of the
// one before it.
func TestResyncAndRestart(t *testing.T) {
	for i, mode := range []string{"nftables", "iptables"} {
		t.Run(mode, func(t *testing.T) {
			testResync(t, mode, subnet(6+i))
		})
	}
}

var fullSync = regexp.MustCompile(`Synced rules.*"kind": ?"full"`)

// fullSyncs counts the full syncs a proxy's log reports.
func fullSyncs(log *lockedBuffer) int { return len(fullSync.FindAllString(log.String(), -1)) }

func testResync(t *testing.T, mode string, k int) {
	ctx := context.Background()
	tp := newTopology(t, mode[:3]+"r", k)
	for i := range tp.eps {
		tp.serve(t, i, 8080)
	}
	cs := srv.Clientset(t)
	ns := "tpx-resync-" + mode
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	client := httpClient(tp.client)
	url := func(s *v1.Service) string { return fmt.Sprintf("http://%s:80/", s.Spec.ClusterIP) }
	newService := func(name string) *v1.Service {
		s := createService(t, cs, ns, name, v1.ServiceTypeClusterIP, nil)
		setEndpoints(t, cs, ns, name, tp.epIPs...)
		return s
	}
	answers := func(log *lockedBuffer, s *v1.Service) {
		t.Helper()
		waitFor(t, 10*time.Second, log, "Service "+s.Name+" to answer", func() bool {
			_, err := get(client, url(s))
			return err == nil
		})
	}
	noFailures := func(log *lockedBuffer) {
		t.Helper()
		if strings.Contains(log.String(), "Sync failed") {
			t.Errorf("a sync failed; proxy log:\n%s", tail(log.String(), 40))
		}
	}
	const period = "2s"

	before := newService("before")
	proxy, log := startProxy(t, tp, mode, "", "--sync-period", period)
	answers(log, before)

	t.Run("a Service created after a periodic full sync is reached", func(t *testing.T) {
		waitFor(t, 15*time.Second, log, "a periodic full sync", func() bool { return fullSyncs(log) >= 2 })
		after := newService("after")
		answers(log, after)
		answers(log, before)
		// And after the next one, which finds the new Service's rules.
		n := fullSyncs(log)
		waitFor(t, 15*time.Second, log, "another periodic full sync", func() bool { return fullSyncs(log) > n })
		answers(log, after)
		noFailures(log)
	})

	t.Run("a restarted proxy takes over the rules left and serves new Services", func(t *testing.T) {
		if err := proxy.Stop(10 * time.Second); err != nil {
			t.Fatalf("stop proxy (pid %d): %v", proxy.PID(), err)
		}
		if tp.rulesLeft(t) == "" {
			t.Fatal("no rules left by the stopped proxy")
		}
		// The rules outlive the process: Services keep working meanwhile.
		if _, err := get(client, url(before)); err != nil {
			t.Errorf("with the proxy stopped: %v", err)
		}
		down := newService("while-down")
		_, log2 := startProxy(t, tp, mode, "", "--sync-period", period)
		answers(log2, down)
		answers(log2, before)
		waitFor(t, 15*time.Second, log2, "the restarted proxy's periodic full sync", func() bool { return fullSyncs(log2) >= 2 })
		again := newService("after-restart")
		answers(log2, again)
		noFailures(log2)
		// Service addresses nobody has are still refused.
		refused(t, tp.client, net.JoinHostPort(unallocatedClusterIP(t, cs), "80"))
	})
}
