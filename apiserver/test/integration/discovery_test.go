package integration

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
