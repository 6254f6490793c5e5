package addons

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"sigs.k8s.io/yaml"
)

// object is what the traefik tests read of a rendered object.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec  map[string]any `json:"spec"`
	Rules []struct {
		APIGroups []string `json:"apiGroups"`
		Resources []string `json:"resources"`
		Verbs     []string `json:"verbs"`
	} `json:"rules"`
}

// renderWithHooks renders the chart as a first install does against a
// cluster that serves the Gateway API once the chart's crds/ are in: the CRDs
// (Helm creates them first), the release's objects and the hooks' (helm test
// pods).
func renderWithHooks(t *testing.T, user map[string]any, singleNode bool) map[string]object {
	t.Helper()
	ch, err := Chart("")
	if err != nil {
		t.Fatal(err)
	}
	in := inputs
	in.User, in.SingleNode = user, singleNode
	rel, err := dryRun(ch, Values(in), func(install *action.Install) {
		install.IncludeCRDs = true
		install.APIVersions = common.VersionSet{"gateway.networking.k8s.io/v1/GatewayClass"}
	})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(rel.Manifest, "\n---")
	for _, h := range rel.Hooks {
		docs = append(docs, h.Manifest)
	}
	objs := map[string]object{}
	for _, doc := range docs {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if o.Kind != "" {
			objs[o.Kind+"/"+o.Metadata.Name] = o
		}
	}
	return objs
}

// traefikChart is the subchart's directory in the repository.
const traefikChart = "../../../charts/trireme-addons/charts/traefik"

// gatewayAPIObjects are the objects of the generated files, from their names:
// crds/gateway.networking.k8s.io_<plural>.yaml is the CRD
// <plural>.gateway.networking.k8s.io; templates/…_vap_safeupgrades.yaml the
// policy and its binding.
func gatewayAPIObjects(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(traefikChart + "/crds/*.yaml")
	files = append(files, traefikChart+"/templates/gateway.networking.k8s.io_vap_safeupgrades.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("generated Gateway API templates: %v %v", files, err)
	}
	var keys []string
	for _, f := range files {
		plural := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "gateway.networking.k8s.io_"), ".yaml")
		if plural == "vap_safeupgrades" {
			keys = append(keys, "ValidatingAdmissionPolicy/safe-upgrades.gateway.networking.k8s.io",
				"ValidatingAdmissionPolicyBinding/safe-upgrades.gateway.networking.k8s.io")
			continue
		}
		keys = append(keys, "CustomResourceDefinition/"+plural+".gateway.networking.k8s.io")
	}
	return keys
}

func TestTraefik(t *testing.T) {
	crds := gatewayAPIObjects(t)
	for _, want := range []string{"CustomResourceDefinition/gatewayclasses.gateway.networking.k8s.io",
		"CustomResourceDefinition/httproutes.gateway.networking.k8s.io", "CustomResourceDefinition/referencegrants.gateway.networking.k8s.io"} {
		if !slices.Contains(crds, want) {
			t.Fatalf("generated templates lack %s: %v", want, crds)
		}
	}
	for _, tc := range []struct {
		name       string
		user       map[string]any
		singleNode bool
		present    []string
		absent     []string
		replicas   float64
		service    string
	}{
		{name: "defaults", present: append([]string{"Deployment/traefik", "Service/traefik", "Service/traefik-metrics",
			"IngressClass/traefik", "GatewayClass/traefik", "PodDisruptionBudget/traefik", "ClusterRole/trireme:traefik"}, crds...),
			replicas: 2, service: "LoadBalancer"},
		{name: "single node", singleNode: true, present: []string{"Deployment/traefik"}, absent: []string{"PodDisruptionBudget/traefik"},
			replicas: 1, service: "LoadBalancer"},
		{name: "no policy nor class", user: map[string]any{"traefik": map[string]any{
			"gatewayAPI": map[string]any{"safeUpgradesPolicy": false, "gatewayClass": false}, "service": map[string]any{"type": "ClusterIP"}}},
			present:  []string{"Deployment/traefik", "IngressClass/traefik", "CustomResourceDefinition/gateways.gateway.networking.k8s.io"},
			absent:   []string{"GatewayClass/traefik", "ValidatingAdmissionPolicy/safe-upgrades.gateway.networking.k8s.io"},
			replicas: 2, service: "ClusterIP"},
		{name: "disabled", user: map[string]any{"traefik": map[string]any{"enabled": false}},
			absent: append([]string{"Deployment/traefik", "Service/traefik", "IngressClass/traefik", "GatewayClass/traefik", "ClusterRole/trireme:traefik"}, crds...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderWithHooks(t, tc.user, tc.singleNode)
			for _, k := range tc.present {
				if _, ok := objs[k]; !ok {
					t.Errorf("%s not rendered", k)
				}
			}
			for _, k := range tc.absent {
				if _, ok := objs[k]; ok {
					t.Errorf("%s rendered", k)
				}
			}
			if d, ok := objs["Deployment/traefik"]; ok {
				if got := d.Spec["replicas"]; got != tc.replicas {
					t.Errorf("replicas %v, want %v", got, tc.replicas)
				}
			}
			if s, ok := objs["Service/traefik"]; ok && s.Spec["type"] != tc.service {
				t.Errorf("Service type %v, want %s", s.Spec["type"], tc.service)
			}
		})
	}

	objs := renderWithHooks(t, nil, false)
	t.Run("default IngressClass", func(t *testing.T) {
		ic := objs["IngressClass/traefik"]
		if ic.Spec["controller"] != "traefik.io/ingress-controller" || ic.Metadata.Annotations["ingressclass.kubernetes.io/is-default-class"] != "true" ||
			ic.Metadata.Annotations["ingressclass.trireme.dev/published-service"] != Namespace+"/traefik" {
			t.Errorf("IngressClass traefik: controller %v, annotations %v", ic.Spec["controller"], ic.Metadata.Annotations)
		}
	})
	t.Run("GatewayClass", func(t *testing.T) {
		gc := objs["GatewayClass/traefik"]
		if gc.Spec["controllerName"] != "traefik.io/gateway-controller" {
			t.Errorf("GatewayClass traefik: controllerName %v", gc.Spec["controllerName"])
		}
		// The CRD's maxLength; the apiserver refuses the hook otherwise.
		if d, _ := gc.Spec["description"].(string); len(d) > 64 {
			t.Errorf("GatewayClass traefik: description of %d bytes, more than 64", len(d))
		}
	})
	t.Run("CRDs are the standard channel of v1.6.3", func(t *testing.T) {
		for _, k := range crds {
			a := objs[k].Metadata.Annotations
			if a["gateway.networking.k8s.io/bundle-version"] != "v1.6.3" || a["gateway.networking.k8s.io/channel"] != "standard" {
				t.Errorf("%s: annotations %v", k, a)
			}
		}
	})
	t.Run("least privilege", func(t *testing.T) {
		for _, r := range objs["ClusterRole/trireme:traefik"].Rules {
			for _, v := range r.Verbs {
				status := true
				for _, res := range r.Resources {
					status = status && strings.HasSuffix(res, "/status")
					if res == "*" || strings.Contains(strings.Join(r.APIGroups, ","), "*") {
						t.Errorf("wildcard in rule %+v", r)
					}
				}
				switch {
				case v == "list" || v == "watch":
				case v == "update" && status:
				default:
					t.Errorf("verb %s on %v: Traefik only lists and watches, and updates status", v, r.Resources)
				}
			}
		}
	})
	t.Run("host ports", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			on       bool
			want     []string
			wantNone []string
		}{
			{"off", false, nil, []string{"hostPort", "requiredDuringScheduling"}},
			{"on", true, []string{"hostPort: 80", "hostPort: 443", "requiredDuringSchedulingIgnoredDuringExecution"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d := renderWithHooks(t, map[string]any{"traefik": map[string]any{"hostPorts": tc.on}}, false)["Deployment/traefik"]
				b, err := yaml.Marshal(d.Spec)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(b), w) {
						t.Errorf("Deployment lacks %q", w)
					}
				}
				for _, w := range tc.wantNone {
					if strings.Contains(string(b), w) {
						t.Errorf("Deployment has %q", w)
					}
				}
			})
		}
	})
	t.Run("Gateway addresses from the Service", func(t *testing.T) {
		b, err := yaml.Marshal(objs["Deployment/traefik"].Spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"--providers.kubernetesGateway.statusAddress.service.name=traefik",
			"--metrics.prometheus.entryPoint=metrics",
			"path: /ping",
		} {
			if !strings.Contains(string(b), want) {
				t.Errorf("Deployment traefik lacks %q", want)
			}
		}
		// The controller-manager writes the Ingresses' addresses
		// (IngressClass annotation above); Traefik's writes are throttled.
		if strings.Contains(string(b), "ingressEndpoint") {
			t.Error("Deployment traefik writes Ingress status itself")
		}
	})
}

// TestGatewayAPIFilesVerbatim: each generated file is upstream's under a
// header (the policy between the values switch), so that
// hack/update-codegen.sh is the only way they change; and without the Gateway
// API served (an upgrade of a release that predates the CRDs), no
// GatewayClass is rendered to fail the upgrade.
func TestGatewayAPIFilesVerbatim(t *testing.T) {
	crds, err := filepath.Glob(traefikChart + "/crds/*.yaml")
	if err != nil || len(crds) == 0 {
		t.Fatalf("crds: %v %v", crds, err)
	}
	for _, f := range crds {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "# Generated by hack/update-codegen.sh from sigs.k8s.io/gateway-api@") {
			t.Errorf("%s is not a generated file", f)
		}
	}
	f := traefikChart + "/templates/gateway.networking.k8s.io_vap_safeupgrades.yaml"
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 4 || !strings.Contains(lines[0], "Generated by hack/update-codegen.sh") ||
		lines[1] != "{{- if .Values.gatewayAPI.safeUpgradesPolicy }}" || lines[len(lines)-1] != "{{- end }}" {
		t.Errorf("%s is not a generated template", f)
	}

	ch, err := Chart("")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := Render(ch, Values(inputs))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(manifest, "kind: GatewayClass") {
		t.Error("GatewayClass rendered though the cluster does not serve gateway.networking.k8s.io/v1")
	}
}
