package apiserver_test

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"trireme.dev/componentbase/testcluster"
)

func TestCreateNamespace(t *testing.T) {
	newNamespace(t, "demo")
	got := jsonpath(t, `{.status.phase} {.spec.finalizers} {.metadata.labels.kubernetes\.io/metadata\.name}`, "get", "namespace", "demo")
	if want := `Active ["kubernetes"] demo`; got != want {
		t.Fatalf("namespace demo: phase, finalizers, name label = %q, want %q", got, want)
	}
	res := srv.Kubectl(t, "create", "namespace", "demo")
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, `Error from server (AlreadyExists): namespaces "demo" already exists`) {
		t.Fatalf("second create of namespace demo: want AlreadyExists, got %s", res)
	}
}

func TestCreateConfigMapFromLiteral(t *testing.T) {
	ns := newNamespace(t, "cm-literal")
	wantStdout(t, kubectlOK(t, "-n", ns, "create", "configmap", "c", "--from-literal=a=b"), "configmap/c created\n")
	if got := jsonpath(t, "{.data.a}", "-n", ns, "get", "configmap", "c"); got != "b" {
		t.Fatalf("data.a = %q, want b", got)
	}
	tb := testcluster.ParseTable(t, kubectlOK(t, "-n", ns, "get", "configmap", "c").Stdout)
	tb.WantHeader(t, "NAME", "DATA", "AGE")
	if got := tb.Row(t, "NAME", "c")["DATA"]; got != "1" {
		t.Fatalf("DATA = %q, want 1", got)
	}
}

// createWeb runs the suite's standard deployment command in ns.
func createWeb(t *testing.T, ns string) {
	t.Helper()
	wantStdout(t, kubectlOK(t, "-n", ns, "create", "deployment", "web", "--image=busybox", "--replicas=3", "--", "sleep", "3600"),
		"deployment.apps/web created\n")
}

func TestCreateDeploymentHasUpstreamDefaults(t *testing.T) {
	ns := newNamespace(t, "deploy-defaults")
	createWeb(t, ns)
	var d appsv1.Deployment
	raw := getYAML(t, &d, "-n", ns, "get", "deploy", "web", "--show-managed-fields")
	wantMatch(t, raw, `(?m)^      maxSurge: 25%$`, `(?m)^      maxUnavailable: 25%$`)

	spec, pod := d.Spec, d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers = %d, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	checks := []struct {
		field     string
		got, want any
	}{
		{"spec.replicas", deref(spec.Replicas), int32(3)},
		{"spec.selector.matchLabels", spec.Selector.MatchLabels, map[string]string{"app": "web"}},
		{"spec.strategy.type", spec.Strategy.Type, appsv1.RollingUpdateDeploymentStrategyType},
		{"spec.strategy.rollingUpdate.maxSurge", fmtPtr(spec.Strategy.RollingUpdate, func(r *appsv1.RollingUpdateDeployment) any { return r.MaxSurge.String() }), "25%"},
		{"spec.strategy.rollingUpdate.maxUnavailable", fmtPtr(spec.Strategy.RollingUpdate, func(r *appsv1.RollingUpdateDeployment) any { return r.MaxUnavailable.String() }), "25%"},
		{"spec.revisionHistoryLimit", deref(spec.RevisionHistoryLimit), int32(10)},
		{"spec.progressDeadlineSeconds", deref(spec.ProgressDeadlineSeconds), int32(600)},
		{"spec.template.metadata.labels", d.Spec.Template.Labels, map[string]string{"app": "web"}},
		{"spec.template.spec.restartPolicy", pod.RestartPolicy, corev1.RestartPolicyAlways},
		{"spec.template.spec.dnsPolicy", pod.DNSPolicy, corev1.DNSClusterFirst},
		{"spec.template.spec.terminationGracePeriodSeconds", deref(pod.TerminationGracePeriodSeconds), int64(30)},
		{"spec.template.spec.schedulerName", pod.SchedulerName, "default-scheduler"},
		{"spec.template.spec.securityContext is set", pod.SecurityContext != nil, true},
		{"containers[0].name", c.Name, "busybox"},
		{"containers[0].image", c.Image, "busybox"},
		{"containers[0].command", c.Command, []string{"sleep", "3600"}},
		{"containers[0].imagePullPolicy", c.ImagePullPolicy, corev1.PullAlways},
		{"containers[0].terminationMessagePath", c.TerminationMessagePath, "/dev/termination-log"},
		{"containers[0].terminationMessagePolicy", c.TerminationMessagePolicy, corev1.TerminationMessageReadFile},
		{"metadata.generation", d.Generation, int64(1)},
		{"metadata.uid is set", d.UID != "", true},
		// The deployment controller adds the revision annotation; the
		// apiserver and kubectl create add none.
		{"metadata.annotations other than the revision", len(d.Annotations) - len(pick(d.Annotations, "deployment.kubernetes.io/revision")), 0},
	}
	for _, ck := range checks {
		if fmtAny(ck.got) != fmtAny(ck.want) {
			t.Errorf("%s = %v, want %v", ck.field, ck.got, ck.want)
		}
	}
	managers := []string{}
	for _, mf := range d.ManagedFields {
		managers = append(managers, mf.Manager)
	}
	if !slices.Contains(managers, "kubectl-create") {
		t.Errorf("managedFields managers = %v, want kubectl-create among them", managers)
	}

	tb := testcluster.ParseTable(t, kubectlOK(t, "-n", ns, "get", "deployment", "web").Stdout)
	tb.WantHeader(t, "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE")
	row := tb.Row(t, "NAME", "web")
	// UP-TO-DATE is 0 or 3 depending on how far the deployment controller
	// has got; with no kubelet no pod is ever ready.
	if row["READY"] != "0/3" || (row["UP-TO-DATE"] != "0" && row["UP-TO-DATE"] != "3") || row["AVAILABLE"] != "0" {
		t.Errorf("get deployment row = %v, want READY 0/3, UP-TO-DATE 0 or 3, AVAILABLE 0 (no kubelet runs)", row)
	}
}

func TestScaleDeployment(t *testing.T) {
	ns := newNamespace(t, "deploy-scale")
	createWeb(t, ns)
	wantStdout(t, kubectlOK(t, "-n", ns, "scale", "deploy", "web", "--replicas=5"), "deployment.apps/web scaled\n")
	if got := jsonpath(t, "{.spec.replicas} {.metadata.generation}", "-n", ns, "get", "deployment", "web"); got != "5 2" {
		t.Errorf("replicas and generation after scale = %q, want %q", got, "5 2")
	}
	got := jsonpath(t, "{.apiVersion} {.kind} {.spec.replicas} {.status.selector}", "-n", ns, "get", "deployment", "web", "--subresource=scale")
	if want := "autoscaling/v1 Scale 5 app=web"; got != want {
		t.Errorf("scale subresource = %q, want %q", got, want)
	}
}

func TestExposeDeploymentAllocatesClusterIP(t *testing.T) {
	ns := newNamespace(t, "deploy-expose")
	createWeb(t, ns)
	wantStdout(t, kubectlOK(t, "-n", ns, "expose", "deploy", "web", "--port", "80"), "service/web exposed\n")
	var svc corev1.Service
	getYAML(t, &svc, "-n", ns, "get", "service", "web")

	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		t.Fatalf("clusterIP %q: %v", svc.Spec.ClusterIP, err)
	}
	prefix := netip.MustParsePrefix(serviceCIDR)
	if !prefix.Contains(ip) || ip == prefix.Addr() || ip.String() == kubernetesSvcIP {
		t.Errorf("clusterIP %s is not a free address inside %s", ip, serviceCIDR)
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"spec.type", svc.Spec.Type, corev1.ServiceTypeClusterIP},
		{"spec.clusterIPs", svc.Spec.ClusterIPs, []string{svc.Spec.ClusterIP}},
		{"spec.ipFamilies", svc.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}},
		{"spec.ipFamilyPolicy", deref(svc.Spec.IPFamilyPolicy), corev1.IPFamilyPolicySingleStack},
		{"spec.sessionAffinity", svc.Spec.SessionAffinity, corev1.ServiceAffinityNone},
		{"spec.internalTrafficPolicy", deref(svc.Spec.InternalTrafficPolicy), corev1.ServiceInternalTrafficPolicyCluster},
		{"spec.selector", svc.Spec.Selector, map[string]string{"app": "web"}},
		{"spec.ports", fmtAny(svc.Spec.Ports), fmtAny([]corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intOrInt(80)}})},
	}
	for _, ck := range checks {
		if fmtAny(ck.got) != fmtAny(ck.want) {
			t.Errorf("%s = %v, want %v", ck.field, ck.got, ck.want)
		}
	}
	tb := testcluster.ParseTable(t, kubectlOK(t, "-n", ns, "get", "service", "web").Stdout)
	row := tb.Row(t, "NAME", "web")
	if row["TYPE"] != "ClusterIP" || row["CLUSTER-IP"] != ip.String() || row["EXTERNAL-IP"] != "<none>" || row["PORT(S)"] != "80/TCP" {
		t.Errorf("get service row = %v", row)
	}
}

func TestDeleteDeployment(t *testing.T) {
	ns := newNamespace(t, "deploy-delete")
	createWeb(t, ns)
	res := kubectlOK(t, "-n", ns, "delete", "deploy", "web")
	// kubectl 1.33 added the namespace to the confirmation.
	if !regexp.MustCompile(`^deployment\.apps "web" deleted( from ` + ns + ` namespace)?\n$`).MatchString(res.Stdout) {
		t.Fatalf("delete output = %q", res.Stdout)
	}
	res = srv.Kubectl(t, "-n", ns, "get", "deployment", "web")
	if res.ExitCode != 1 || strings.TrimSpace(res.Stderr) != `Error from server (NotFound): deployments.apps "web" not found` {
		t.Fatalf("get after delete: want NotFound, got %s", res)
	}
}

// pick returns the entries of m under keys.
func pick(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}
