package integration

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"trireme.dev/api/scheme"
	"trireme.dev/componentbase/testcluster"
)

// upstreamDiscovery is what a kube-apiserver advertises for the served
// resources that have short names, categories or subresources; kubectl
// (`get po`, `get all`, `scale`, `drain`) depends on it. Subresources served
// by proxying to a kubelet (log, exec, attach, portforward, proxy) are left
// out: they come with the node components.
var upstreamDiscovery = map[string]struct {
	shortNames, categories, subresources []string
}{
	"configmaps":                           {shortNames: []string{"cm"}},
	"endpoints":                            {shortNames: []string{"ep"}},
	"events":                               {shortNames: []string{"ev"}},
	"limitranges":                          {shortNames: []string{"limits"}},
	"namespaces":                           {shortNames: []string{"ns"}, subresources: []string{"finalize", "status"}},
	"nodes":                                {shortNames: []string{"no"}, subresources: []string{"status"}},
	"persistentvolumeclaims":               {shortNames: []string{"pvc"}, subresources: []string{"status"}},
	"persistentvolumes":                    {shortNames: []string{"pv"}, subresources: []string{"status"}},
	"pods":                                 {shortNames: []string{"po"}, categories: []string{"all"}, subresources: []string{"binding", "ephemeralcontainers", "eviction", "resize", "status"}},
	"replicationcontrollers":               {shortNames: []string{"rc"}, categories: []string{"all"}, subresources: []string{"scale", "status"}},
	"resourcequotas":                       {shortNames: []string{"quota"}, subresources: []string{"status"}},
	"serviceaccounts":                      {shortNames: []string{"sa"}, subresources: []string{"token"}},
	"services":                             {shortNames: []string{"svc"}, categories: []string{"all"}, subresources: []string{"status"}},
	"daemonsets.apps":                      {shortNames: []string{"ds"}, categories: []string{"all"}, subresources: []string{"status"}},
	"deployments.apps":                     {shortNames: []string{"deploy"}, categories: []string{"all"}, subresources: []string{"scale", "status"}},
	"replicasets.apps":                     {shortNames: []string{"rs"}, categories: []string{"all"}, subresources: []string{"scale", "status"}},
	"statefulsets.apps":                    {shortNames: []string{"sts"}, categories: []string{"all"}, subresources: []string{"scale", "status"}},
	"cronjobs.batch":                       {shortNames: []string{"cj"}, categories: []string{"all"}, subresources: []string{"status"}},
	"jobs.batch":                           {categories: []string{"all"}, subresources: []string{"status"}},
	"horizontalpodautoscalers.autoscaling": {shortNames: []string{"hpa"}, categories: []string{"all"}, subresources: []string{"status"}},
	"events.events.k8s.io":                 {shortNames: []string{"ev"}},
	"priorityclasses.scheduling.k8s.io":    {shortNames: []string{"pc"}},
	"poddisruptionbudgets.policy":          {shortNames: []string{"pdb"}, subresources: []string{"status"}},
	"ingresses.networking.k8s.io":          {shortNames: []string{"ing"}, subresources: []string{"status"}},
	"networkpolicies.networking.k8s.io":    {shortNames: []string{"netpol"}},
	"servicecidrs.networking.k8s.io":       {subresources: []string{"status"}},
	"ipaddresses.networking.k8s.io":        {shortNames: []string{"ip"}},
	"storageclasses.storage.k8s.io":        {shortNames: []string{"sc"}},
	"roles.rbac.authorization.k8s.io":      {},
	"validatingwebhookconfigurations.admissionregistration.k8s.io":   {categories: []string{"api-extensions"}},
	"mutatingwebhookconfigurations.admissionregistration.k8s.io":     {categories: []string{"api-extensions"}},
	"validatingadmissionpolicies.admissionregistration.k8s.io":       {categories: []string{"api-extensions"}, subresources: []string{"status"}},
	"validatingadmissionpolicybindings.admissionregistration.k8s.io": {categories: []string{"api-extensions"}},
	"mutatingadmissionpolicies.admissionregistration.k8s.io":         {categories: []string{"api-extensions"}},
	"mutatingadmissionpolicybindings.admissionregistration.k8s.io":   {categories: []string{"api-extensions"}},
	"certificatesigningrequests.certificates.k8s.io":                 {shortNames: []string{"csr"}, subresources: []string{"approval", "status"}},
	"clustertrustbundles.certificates.k8s.io":                        {},
	"podcertificaterequests.certificates.k8s.io":                     {subresources: []string{"status"}},
	"storageversionmigrations.storagemigration.k8s.io":               {subresources: []string{"status"}},
	"rolebindings.rbac.authorization.k8s.io":                         {},
	"clusterroles.rbac.authorization.k8s.io":                         {},
	"clusterrolebindings.rbac.authorization.k8s.io":                  {},
	"volumeattributesclasses.storage.k8s.io":                         {shortNames: []string{"vac"}},
	"volumeattachments.storage.k8s.io":                               {subresources: []string{"status"}},
	"flowschemas.flowcontrol.apiserver.k8s.io":                       {subresources: []string{"status"}},
	"prioritylevelconfigurations.flowcontrol.apiserver.k8s.io":       {subresources: []string{"status"}},
	"resourceclaims.resource.k8s.io":                                 {subresources: []string{"status"}},
}

func TestDiscovery(t *testing.T) {
	_, lists, err := client.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		shortNames, categories, verbs []string
		singular                      string
		subresources                  []string
	}
	got := map[schema.GroupVersionResource]*entry{}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			main, sub, isSub := strings.Cut(r.Name, "/")
			e := got[gv.WithResource(main)]
			if e == nil {
				e = &entry{}
				got[gv.WithResource(main)] = e
			}
			if isSub {
				e.subresources = append(e.subresources, sub)
				continue
			}
			e.shortNames, e.categories, e.verbs, e.singular = r.ShortNames, r.Categories, r.Verbs, r.SingularName
		}
	}

	for _, rc := range resourceCases {
		t.Run(rc.id(), func(t *testing.T) {
			e := got[rc.gvr]
			if e == nil {
				t.Fatalf("not in discovery")
			}
			want := upstreamDiscovery[rc.id()]
			if !sameSet(e.shortNames, want.shortNames) {
				t.Errorf("shortNames = %v, want %v", e.shortNames, want.shortNames)
			}
			if !sameSet(e.categories, want.categories) {
				t.Errorf("categories = %v, want %v", e.categories, want.categories)
			}
			for _, sub := range want.subresources {
				if !slices.Contains(e.subresources, sub) {
					t.Errorf("subresource %s not served (have %v)", sub, e.subresources)
				}
			}
			verbs := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
			if rc.id() == "namespaces" {
				// Deleting namespaces as a collection would skip their two-step delete.
				verbs = slices.DeleteFunc(verbs, func(v string) bool { return v == "deletecollection" })
			}
			if !sameSet(e.verbs, verbs) {
				t.Errorf("verbs = %v, want %v", e.verbs, verbs)
			}
			if e.singular == "" {
				t.Errorf("no singularName")
			}
		})
	}
}

// TestGetNamespaces checks `kubectl get ns` lists the bootstrap namespaces
// Active, in upstream's columns.
func TestGetNamespaces(t *testing.T) {
	tb := testcluster.ParseTable(t, kubectlOK(t, "get", "ns").Stdout)
	tb.WantHeader(t, "NAME", "STATUS", "AGE")
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		t.Run(name, func(t *testing.T) {
			if got := tb.Row(t, "NAME", name)["STATUS"]; got != "Active" {
				t.Fatalf("namespace %s STATUS = %q, want Active", name, got)
			}
		})
	}
}

// TestAPIVersionsListsEveryServedGroup checks `kubectl api-versions`
// against the groups the api module installs.
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

// apiResourcesLine is one line of `kubectl api-resources` as upstream prints
// it for the same resource.
type apiResourcesLine struct {
	name, shortNames, apiVersion string
	namespaced                   bool
	kind                         string
}

var upstreamAPIResources = []apiResourcesLine{
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
	{"storageversionmigrations", "", "storagemigration.k8s.io/v1", false, "StorageVersionMigration"},
}

// TestAPIResources checks `kubectl api-resources` prints each served
// resource's line as upstream does, and something in every served group.
func TestAPIResources(t *testing.T) {
	tb := testcluster.ParseTable(t, kubectlOK(t, "api-resources").Stdout)
	tb.WantHeader(t, "NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND")
	byKey := map[string]map[string]string{}
	versions := map[string]bool{}
	for _, r := range tb.Rows {
		byKey[r["APIVERSION"]+" "+r["NAME"]] = r
		versions[r["APIVERSION"]] = true
	}
	for _, want := range upstreamAPIResources {
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

// TestExplainPodContainerResources checks `kubectl explain` finds a nested
// field's schema and documentation in the published OpenAPI.
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

// TestReadyzVerbose checks /readyz?verbose lists every check passed, in
// upstream's format, the usual ones among them.
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
