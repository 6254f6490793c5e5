package cluster

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
)

// legacyCoreDNS is what an earlier triremeadm made for DNS.
//
//go:embed testdata/legacy-coredns.yaml
var legacyCoreDNS string

const (
	release   = "trireme-addons"
	releaseNS = "kube-system"
)

// helm runs a helm CLI (`make helm` builds helm, Helm 4, and helm3) against
// the cluster as its admin.
func helm(bin string, args ...string) (string, error) {
	path, err := testcluster.Binary(bin)
	if err != nil {
		return "", fmt.Errorf("%w (make helm)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", suite.admin}, args...)...)
	cmd.Env = append(cmd.Environ(), "HELM_CACHE_HOME="+filepath.Join(suite.root, "helm/cache"),
		"HELM_CONFIG_HOME="+filepath.Join(suite.root, "helm/config"), "HELM_DATA_HOME="+filepath.Join(suite.root, "helm/data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func mustHelm(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := helm(bin, args...)
	if err != nil {
		state, _ := kubectl("-n", releaseNS, "get", "pods", "-o", "wide")
		t.Fatalf("%s\n%v", state, err)
	}
	return out
}

// upgradeAddons upgrades the addons' release with the chart in this tree,
// every value kept but the --set-json ones given. It does not wait (callers
// wait for the workloads they changed): after TestMultiNode a worker whose
// kubelet it stopped keeps a flannel pod that never turns ready.
func upgradeAddons(t *testing.T, setJSON ...string) {
	t.Helper()
	chart, err := filepath.Abs("../../charts/trireme-addons")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"upgrade", release, chart, "-n", releaseNS, "--reuse-values", "--timeout", "120s"}
	for _, s := range setJSON {
		args = append(args, "--set-json", s)
	}
	mustHelm(t, "helm", args...)
}

// revision is the release's current revision as Helm 4 reports it.
func revision(t *testing.T) int {
	t.Helper()
	var st []struct {
		Revision int `json:"revision"`
		Status   string
	}
	if err := json.Unmarshal([]byte(mustHelm(t, "helm", "history", release, "-n", releaseNS, "-o", "json", "--max", "1")), &st); err != nil || len(st) != 1 {
		t.Fatalf("helm history: %v %v", st, err)
	}
	return st[0].Revision
}

// corednsCPU is the CPU request of the CoreDNS Deployment's container.
func corednsCPU(t *testing.T) string {
	t.Helper()
	return must(t, "-n", releaseNS, "get", "deployment/coredns", "-o", "jsonpath={.spec.template.spec.containers[0].resources.requests.cpu}")
}

// dnsWatch looks a name up from the demo client pod every half second until
// stopped, counting the lookups that failed and the longest run of failures.
type dnsWatch struct {
	mu                        sync.Mutex
	lookups, failed, worstRun int
	run                       int
	last                      string
	stop                      chan struct{}
	done                      chan struct{}
	halt                      func()
}

// watchDNS starts a watch that ends with t at the latest, so that a failed
// test leaves no lookup running into the suite's reset.
func watchDNS(t *testing.T) *dnsWatch {
	w := &dnsWatch{stop: make(chan struct{}), done: make(chan struct{})}
	w.halt = sync.OnceFunc(func() {
		close(w.stop)
		<-w.done
	})
	t.Cleanup(w.halt)
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			out, err := execIn("demo", "client", "nslookup kubernetes.default.svc.cluster.local")
			w.mu.Lock()
			w.lookups++
			if err != nil {
				w.failed++
				w.run++
				w.last = fmt.Sprintf("%v: %s", err, out)
				w.worstRun = max(w.worstRun, w.run)
			} else {
				w.run = 0
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// end stops the watch and fails t if DNS stopped answering: a single lost
// lookup (a UDP packet to a pod that is going away) is tolerated, two in a row
// are a gap.
func (w *dnsWatch) end(t *testing.T, during string) {
	t.Helper()
	w.halt()
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Printf("e2e/cluster: DNS during %s: %d lookups, %d failed, longest run of failures %d\n", during, w.lookups, w.failed, w.worstRun)
	if w.lookups == 0 {
		t.Errorf("DNS during %s: no lookup was made", during)
	}
	if w.worstRun > 1 {
		t.Errorf("DNS stopped answering during %s: %d lookups in a row failed, last: %s", during, w.worstRun, w.last)
	}
}

// TestHelmRelease: triremeadm installed the addons as a real Helm release that
// users' helm CLIs (4 and 3) lint, list, read, upgrade, test, roll back and
// uninstall; a failed upgrade is rolled back while DNS keeps answering; the
// CoreDNS objects of an earlier triremeadm are adopted with no gap in DNS;
// `triremeadm upgrade` upgrades the release keeping a user's values.
func TestHelmRelease(t *testing.T) {
	begin(t)
	chartDir, err := filepath.Abs("../../charts/trireme-addons")
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"helm", "helm3"} {
		mustHelm(t, bin, "lint", "--strict", "--with-subcharts", chartDir)
		var list []struct{ Name, Namespace, Status, Chart string }
		if err := json.Unmarshal([]byte(mustHelm(t, bin, "list", "-A", "-o", "json")), &list); err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Name != release || list[0].Namespace != releaseNS || list[0].Status != "deployed" {
			t.Fatalf("%s list -A: %+v, want %s in %s deployed", bin, list, release, releaseNS)
		}
		if vals := mustHelm(t, bin, "get", "values", release, "-n", releaseNS); !strings.Contains(vals, "imageTag:") || !strings.Contains(vals, "dnsServiceIP:") {
			t.Fatalf("%s get values lacks the global values triremeadm set:\n%s", bin, vals)
		}
	}
	if _, err := kubectl("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=90s"); err != nil {
		t.Fatal(err)
	}
	mustHelm(t, "helm", "test", release, "-n", releaseNS, "--timeout", "2m")

	// helm upgrade --set, then a rollback with Helm 3.
	first := revision(t)
	dns := watchDNS(t)
	mustHelm(t, "helm", "upgrade", release, chartDir, "-n", releaseNS, "--reuse-values", "--set", "coredns.resources.requests.cpu=50m", "--wait", "--timeout", "2m")
	if got := corednsCPU(t); got != "50m" {
		t.Errorf("after helm upgrade --set coredns.resources.requests.cpu=50m: %s", got)
	}
	upgraded := revision(t)
	if upgraded != first+1 {
		t.Errorf("revision %d after an upgrade of %d", upgraded, first)
	}
	// An image containerd lacks: the upgrade fails its wait, the old pod keeps
	// serving, and helm rollback restores the release.
	if out, err := helm("helm", "upgrade", release, chartDir, "-n", releaseNS, "--reuse-values", "--set", "coredns.image.tag=no-such-tag", "--wait", "--timeout", "20s"); err == nil {
		t.Errorf("an upgrade to a missing image succeeded:\n%s", out)
	}
	mustHelm(t, "helm3", "rollback", release, fmt.Sprint(upgraded), "-n", releaseNS, "--wait", "--timeout", "2m")
	if _, err := kubectl("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=90s"); err != nil {
		t.Fatal(err)
	}
	mustHelm(t, "helm", "rollback", release, fmt.Sprint(first), "-n", releaseNS, "--wait", "--timeout", "2m")
	if got := corednsCPU(t); got != "100m" {
		t.Errorf("after helm rollback to revision %d: CPU request %s, want 100m", first, got)
	}
	dns.end(t, "helm upgrade, a failed upgrade and two rollbacks")

	// uninstall removes every addon; an earlier triremeadm's CoreDNS is then
	// adopted by the addon phase in place.
	mustHelm(t, "helm", "uninstall", release, "-n", releaseNS, "--wait", "--timeout", "2m")
	if out, _ := kubectl("-n", "kube-system", "get", "deployment/coredns", "--ignore-not-found", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Fatalf("helm uninstall left %s", out)
	}
	image := nodeImages(t, "coredns")[0]
	if out, err := kubectlStdin(fmt.Sprintf(legacyCoreDNS, image, "10.96.0.10"), "apply", "--server-side", "--field-manager", "triremeadm", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	must(t, "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=90s")
	uid := must(t, "-n", "kube-system", "get", "deployment/coredns", "-o", "jsonpath={.metadata.uid}")
	slowly.ForNil(t, 60*time.Second, "DNS from the legacy CoreDNS", func() error {
		_, err := execIn("demo", "client", "nslookup kubernetes.default.svc.cluster.local")
		return err
	})
	dns = watchDNS(t)
	out, err := exec.Command(suite.adm, admArgs(append([]string{"init", "phase", "addon", "--single-node"}, suite.initFlags...)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("init phase addon: %v\n%s", err, out)
	}
	fmt.Printf("e2e/cluster: init phase addon over an earlier triremeadm's CoreDNS:\n%s", out)
	if !strings.Contains(string(out), "adopted into release") {
		t.Errorf("the addon phase did not say it adopted the CoreDNS objects:\n%s", out)
	}
	must(t, "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=90s")
	dns.end(t, "the adoption of an earlier triremeadm's CoreDNS")
	if got := must(t, "-n", "kube-system", "get", "deployment/coredns", "-o", "jsonpath={.metadata.uid}"); got != uid {
		t.Errorf("the CoreDNS Deployment was replaced (uid %s, was %s), not adopted", got, uid)
	}
	if got := must(t, "-n", "kube-system", "get", "deployment/coredns", "-o", `jsonpath={.metadata.annotations.meta\.helm\.sh/release-name}`); got != release {
		t.Errorf("the CoreDNS Deployment belongs to release %q after the addon phase", got)
	}
	mustHelm(t, "helm", "status", release, "-n", releaseNS)

	// triremeadm upgrade's addons step (the static pods and certificates left
	// out: this node runs this version already) upgrades the release to its
	// chart, keeping a value a user set since.
	mustHelm(t, "helm", "upgrade", release, chartDir, "-n", releaseNS, "--reuse-values", "--set", "coredns.resources.requests.cpu=60m", "--wait", "--timeout", "2m")
	before := revision(t)
	version, err := exec.Command(suite.adm, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	dns = watchDNS(t)
	out, err = exec.Command(suite.adm, admArgs("upgrade", "apply", strings.TrimSpace(string(version)), "--skip-phases", "certs,control-plane")...).CombinedOutput()
	if err != nil {
		t.Fatalf("upgrade apply: %v\n%s", err, out)
	}
	fmt.Printf("e2e/cluster: triremeadm upgrade apply, its addons step:\n%s", out)
	dns.end(t, "triremeadm upgrade's addons step")
	if got := revision(t); got != before+1 || !strings.Contains(string(out), fmt.Sprintf("revision %d", before+1)) {
		t.Errorf("revision %d after triremeadm upgrade of revision %d", got, before)
	}
	if got := corednsCPU(t); got != "60m" {
		t.Errorf("triremeadm upgrade lost the value a user set: CoreDNS CPU request %s, want 60m", got)
	}
	if vals := mustHelm(t, "helm", "get", "values", release, "-n", releaseNS); !strings.Contains(vals, "dnsServiceIP:") {
		t.Errorf("triremeadm upgrade lost the global values init set:\n%s", vals)
	}
	if hist := mustHelm(t, "helm", "history", release, "-n", releaseNS, "--max", "1"); !strings.Contains(hist, "upgraded by triremeadm") {
		t.Errorf("helm history after triremeadm upgrade:\n%s", hist)
	}
}
