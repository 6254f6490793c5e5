package apiserver_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"trireme.dev/api/scheme"
)

func TestGetNamespaces(t *testing.T) {
	tb := parseTable(t, kubectlOK(t, "get", "ns").Stdout)
	tb.wantHeader(t, "NAME", "STATUS", "AGE")
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		t.Run(name, func(t *testing.T) {
			if got := tb.row(t, "NAME", name)["STATUS"]; got != "Active" {
				t.Fatalf("namespace %s STATUS = %q, want Active", name, got)
			}
		})
	}
}

func TestAPIVersionsListsEveryServedGroup(t *testing.T) {
	got := strings.Split(strings.TrimSpace(kubectlOK(t, "api-versions").Stdout), "\n")
	if !slices.IsSorted(got) {
		t.Errorf("api-versions output is not sorted: %q", got)
	}
	for _, g := range scheme.Groups {
		t.Run(g.Version.String(), func(t *testing.T) {
			if !slices.Contains(got, g.Version.String()) {
				t.Fatalf("api-versions lacks %s:\n%s", g.Version, strings.Join(got, "\n"))
			}
		})
	}
}

// servedResource is one line of `kubectl api-resources` as upstream prints
// it for the same resource.
type servedResource struct {
	name, shortNames, apiVersion string
	namespaced                   bool
	kind                         string
}

var servedResources = []servedResource{
	{"configmaps", "cm", "v1", true, "ConfigMap"},
	{"endpoints", "ep", "v1", true, "Endpoints"},
	{"events", "ev", "v1", true, "Event"},
	{"limitranges", "limits", "v1", true, "LimitRange"},
	{"namespaces", "ns", "v1", false, "Namespace"},
	{"nodes", "no", "v1", false, "Node"},
	{"persistentvolumeclaims", "pvc", "v1", true, "PersistentVolumeClaim"},
	{"persistentvolumes", "pv", "v1", false, "PersistentVolume"},
	{"pods", "po", "v1", true, "Pod"},
	{"podtemplates", "", "v1", true, "PodTemplate"},
	{"replicationcontrollers", "rc", "v1", true, "ReplicationController"},
	{"resourcequotas", "quota", "v1", true, "ResourceQuota"},
	{"secrets", "", "v1", true, "Secret"},
	{"serviceaccounts", "sa", "v1", true, "ServiceAccount"},
	{"services", "svc", "v1", true, "Service"},
	{"controllerrevisions", "", "apps/v1", true, "ControllerRevision"},
	{"daemonsets", "ds", "apps/v1", true, "DaemonSet"},
	{"deployments", "deploy", "apps/v1", true, "Deployment"},
	{"replicasets", "rs", "apps/v1", true, "ReplicaSet"},
	{"statefulsets", "sts", "apps/v1", true, "StatefulSet"},
	{"horizontalpodautoscalers", "hpa", "autoscaling/v2", true, "HorizontalPodAutoscaler"},
	{"cronjobs", "cj", "batch/v1", true, "CronJob"},
	{"jobs", "", "batch/v1", true, "Job"},
	{"leases", "", "coordination.k8s.io/v1", true, "Lease"},
	{"endpointslices", "", "discovery.k8s.io/v1", true, "EndpointSlice"},
	{"events", "ev", "events.k8s.io/v1", true, "Event"},
	{"flowschemas", "", "flowcontrol.apiserver.k8s.io/v1", false, "FlowSchema"},
	{"prioritylevelconfigurations", "", "flowcontrol.apiserver.k8s.io/v1", false, "PriorityLevelConfiguration"},
	{"ingressclasses", "", "networking.k8s.io/v1", false, "IngressClass"},
	{"ingresses", "ing", "networking.k8s.io/v1", true, "Ingress"},
	{"ipaddresses", "ip", "networking.k8s.io/v1", false, "IPAddress"},
	{"networkpolicies", "netpol", "networking.k8s.io/v1", true, "NetworkPolicy"},
	{"servicecidrs", "", "networking.k8s.io/v1", false, "ServiceCIDR"},
	{"runtimeclasses", "", "node.k8s.io/v1", false, "RuntimeClass"},
	{"poddisruptionbudgets", "pdb", "policy/v1", true, "PodDisruptionBudget"},
	{"deviceclasses", "", "resource.k8s.io/v1", false, "DeviceClass"},
	{"devicetaintrules", "", "resource.k8s.io/v1", false, "DeviceTaintRule"},
	{"resourceclaims", "", "resource.k8s.io/v1", true, "ResourceClaim"},
	{"resourceclaimtemplates", "", "resource.k8s.io/v1", true, "ResourceClaimTemplate"},
	{"resourceslices", "", "resource.k8s.io/v1", false, "ResourceSlice"},
	{"priorityclasses", "pc", "scheduling.k8s.io/v1", false, "PriorityClass"},
	{"csidrivers", "", "storage.k8s.io/v1", false, "CSIDriver"},
	{"csinodes", "", "storage.k8s.io/v1", false, "CSINode"},
	{"storageclasses", "sc", "storage.k8s.io/v1", false, "StorageClass"},
	{"volumeattachments", "", "storage.k8s.io/v1", false, "VolumeAttachment"},
}

func TestAPIResources(t *testing.T) {
	tb := parseTable(t, kubectlOK(t, "api-resources").Stdout)
	tb.wantHeader(t, "NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND")
	byKey := map[string]map[string]string{}
	versions := map[string]bool{}
	for _, r := range tb.rows {
		byKey[r["APIVERSION"]+" "+r["NAME"]] = r
		versions[r["APIVERSION"]] = true
	}
	for _, want := range servedResources {
		t.Run(want.apiVersion+"/"+want.name, func(t *testing.T) {
			got, ok := byKey[want.apiVersion+" "+want.name]
			if !ok {
				t.Fatalf("api-resources lacks %s in %s", want.name, want.apiVersion)
			}
			wantRow := map[string]string{
				"NAME": want.name, "SHORTNAMES": want.shortNames, "APIVERSION": want.apiVersion,
				"NAMESPACED": strconv.FormatBool(want.namespaced), "KIND": want.kind,
			}
			if fmt.Sprint(got) != fmt.Sprint(wantRow) {
				t.Fatalf("api-resources row = %v, want %v", got, wantRow)
			}
		})
	}
	for _, g := range scheme.Groups {
		if !versions[g.Version.String()] {
			t.Errorf("api-resources lists nothing in served group version %s", g.Version)
		}
	}
}

func TestExplainPodContainerResources(t *testing.T) {
	out := kubectlOK(t, "explain", "pod.spec.containers.resources").Stdout
	wantMatch(t, out,
		`(?m)^KIND:\s+Pod$`,
		`(?m)^VERSION:\s+v1$`,
		`(?m)^FIELD:\s+resources <ResourceRequirements>$`,
		`(?m)^DESCRIPTION:$`,
		`Compute Resources required by this container`,
		`(?m)^FIELDS:$`,
		`(?m)^  claims\t<\[\]ResourceClaim>$`,
		`(?m)^  limits\t<map\[string\]Quantity>$`,
		`(?m)^  requests\t<map\[string\]Quantity>$`,
	)
}

func TestReadyzVerbose(t *testing.T) {
	out := kubectlOK(t, "get", "--raw", "/readyz?verbose").Stdout
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "readyz check passed" {
		t.Errorf("last line = %q, want %q", last, "readyz check passed")
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "[+]") || !strings.HasSuffix(l, " ok") {
			t.Errorf("check line %q is not of the form \"[+]<name> ok\"", l)
		}
	}
	for _, check := range []string{"[+]ping ok", "[+]log ok", "[+]etcd ok", "[+]shutdown ok"} {
		if !slices.Contains(lines, check) {
			t.Errorf("/readyz?verbose lacks %q:\n%s", check, out)
		}
	}
}

func TestKubernetesService(t *testing.T) {
	ports := jsonpath(t, "{.spec.clusterIP} {.spec.ports[0].name} {.spec.ports[0].port} {.spec.ports[0].targetPort}", "get", "service", "kubernetes")
	if want := fmt.Sprintf("%s https 443 %d", kubernetesSvcIP, srv.Port()); ports != want {
		t.Errorf("kubernetes service clusterIP and port = %q, want %q (first IP of %s; the apiserver's secure port)", ports, want, serviceCIDR)
	}
	tb := parseTable(t, kubectlOK(t, "get", "svc", "kubernetes").Stdout)
	tb.wantHeader(t, "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE")
	row := tb.row(t, "NAME", "kubernetes")
	want := map[string]string{"TYPE": "ClusterIP", "CLUSTER-IP": kubernetesSvcIP, "EXTERNAL-IP": "<none>", "PORT(S)": "443/TCP"}
	for col, v := range want {
		if row[col] != v {
			t.Errorf("%s = %q, want %q", col, row[col], v)
		}
	}
}
