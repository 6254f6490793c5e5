package cluster

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The suite installs with --cloud-provider external, as `make up` does: the
// cloud-controller-manager runs as a static pod and every node's kubelet
// registers tainted until it has initialized the node.
const (
	// unlistedWorker is the worker the inventory leaves out: its zone comes
	// from join's --zone, and once the inventory says it is complete
	// (removeUnlistedNodes) and its kubelet stops, its Node is deleted.
	unlistedWorker = "trcl-w2"
	// joinZone is the zone every worker joins with; the inventory overrides
	// it for the workers it lists.
	joinZone = "zone-c"
	// lbPool is the LoadBalancer addresses: the top of the suite's switch
	// network, which the host and every node reach on layer 2.
	lbPool = "10.213.7.240/29"
)

// cloudConfigTemplate is the CCM's inventory (%v: removeUnlistedNodes): the
// host node and the first worker are machines of zones a and b.
const cloudConfigTemplate = `apiVersion: cloudconfig.config.trireme.dev/v1alpha1
kind: CloudConfiguration
removeUnlistedNodes: %v
machines:
- name: ` + nodeName + `
  zone: zone-a
  region: region-1
  instanceType: vm.host
- name: trcl-w1
  zone: zone-b
  region: region-1
loadBalancer:
  pools:
  - name: default
    addresses: ["` + lbPool + `"]
`

// cloudConfigPath is where init's static pod reads the inventory (init
// keeps a file that is there).
func cloudConfigPath() string {
	return filepath.Join(suite.root, "etc/trireme/cloud/cloud-config.yaml")
}

// writeCloudConfig writes the inventory; the CCM re-reads it when it changes.
func writeCloudConfig(removeUnlisted bool) error {
	if err := os.MkdirAll(filepath.Dir(cloudConfigPath()), 0o755); err != nil {
		return err
	}
	return os.WriteFile(cloudConfigPath(), fmt.Appendf(nil, cloudConfigTemplate, removeUnlisted), 0o600)
}

const lbService = `apiVersion: v1
kind: Service
metadata: {name: everywhere-lb, namespace: demo}
spec:
  type: LoadBalancer
  selector: {app: everywhere}
  ports: [{port: 80, targetPort: 8080}]
`

// checkNodesInitialized: the CCM took every node's uninitialized taint off
// and set its provider ID and topology, from the inventory where it lists
// the machine and from join's --zone where it does not.
func checkNodesInitialized(t *testing.T) {
	t.Helper()
	want := map[string]string{nodeName: "zone-a", "trcl-w1": "zone-b", unlistedWorker: joinZone}
	for node, zone := range want {
		slowly.ForNil(t, 60*time.Second, node+" initialized by the cloud-controller-manager", func() error {
			out, err := kubectl("get", "node", node, "-o",
				`jsonpath={.spec.providerID} {.metadata.labels.topology\.kubernetes\.io/zone} {.spec.taints[*].key}`)
			if err != nil {
				return err
			}
			f := strings.Fields(out)
			if len(f) < 2 || f[0] != "trireme://"+node || f[1] != zone || strings.Contains(out, "node.cloudprovider.kubernetes.io/uninitialized") {
				return fmt.Errorf("providerID, zone and taints %q; want trireme://%s and %s, untainted", out, node, zone)
			}
			return nil
		})
	}
	if it := must(t, "get", "node", nodeName, "-o", `jsonpath={.metadata.labels.node\.kubernetes\.io/instance-type}`); it != "vm.host" {
		t.Errorf("%s: instance type %q, want the inventory's vm.host", nodeName, it)
	}
}

// checkLoadBalancer: a LoadBalancer Service gets an address of the pool, ipMode
// VIP, and the host reaches pods on every node through it, over the node that
// announces it.
func checkLoadBalancer(t *testing.T, byNode map[string][2]string) {
	t.Helper()
	if out, err := kubectlStdin(lbService, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ip := lbAddress(t, "demo", "everywhere-lb")
	answersFromEveryPod(t, "LoadBalancer "+ip+" from the host", "http://"+net.JoinHostPort(ip, "80")+"/", len(byNode))
}

// lbAddress waits for a LoadBalancer Service's address, ipMode VIP, and
// fails the test unless it is of the suite's pool.
func lbAddress(t testing.TB, ns, name string) string {
	t.Helper()
	var ip string
	slowly.ForNil(t, 60*time.Second, ns+"/"+name+" gets an address", func() error {
		out, err := kubectl("-n", ns, "get", "service", name, "-o", "jsonpath={.status.loadBalancer.ingress[0].ip} {.status.loadBalancer.ingress[0].ipMode}")
		if err != nil {
			return err
		}
		f := strings.Fields(out)
		if len(f) != 2 || f[1] != "VIP" {
			return fmt.Errorf("ingress %q", out)
		}
		ip = f[0]
		return nil
	})
	_, pool, _ := net.ParseCIDR(lbPool)
	if !pool.Contains(net.ParseIP(ip)) {
		t.Fatalf("%s/%s got %s, outside the pool %s", ns, name, ip, lbPool)
	}
	return ip
}

// answersFromEveryPod asks url from the host until n different pods have
// answered.
func answersFromEveryPod(t *testing.T, what, url string, n int) {
	t.Helper()
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	seen := map[string]bool{}
	slowly.ForNil(t, 60*time.Second, what+" reaching pods on every node", func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		seen[strings.TrimSpace(string(body))] = true
		if len(seen) < n {
			return fmt.Errorf("answers so far from %v", seen)
		}
		return nil
	})
}
