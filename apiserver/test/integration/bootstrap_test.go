package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

func TestBootstrapObjects(t *testing.T) {
	ctx := testContext(t)

	t.Run("priority classes", func(t *testing.T) {
		for name, value := range map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
			pc, err := client.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("priority class %s: %v", name, err)
				continue
			}
			if pc.Value != value {
				t.Errorf("priority class %s value = %d, want %d", name, pc.Value, value)
			}
		}
	})

	t.Run("flow schemas", func(t *testing.T) {
		for _, name := range []string{"exempt", "catch-all", "system-leader-election", "kube-controller-manager", "global-default"} {
			if _, err := client.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("flow schema %s: %v", name, err)
			}
		}
	})

	t.Run("priority level configurations", func(t *testing.T) {
		for _, name := range []string{"exempt", "catch-all", "system", "leader-election", "workload-high", "workload-low", "global-default"} {
			if _, err := client.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("priority level %s: %v", name, err)
			}
		}
	})
}

func TestServerEndpoints(t *testing.T) {
	ctx := testContext(t)
	rc := client.CoreV1().RESTClient()

	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		t.Run(path, func(t *testing.T) {
			body, err := rc.Get().AbsPath(path).DoRaw(ctx)
			if err != nil || string(body) != "ok" {
				t.Errorf("GET %s = %q, %v; want ok", path, body, err)
			}
		})
	}

	t.Run("/version", func(t *testing.T) {
		v, err := client.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.Major != "1" || !strings.HasPrefix(v.Minor, "37") {
			t.Errorf("version %+v, want 1.37", v)
		}
	})

	t.Run("discovery lists every served group", func(t *testing.T) {
		groups, err := client.Discovery().ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, g := range groups.Groups {
			got[g.Name] = g.PreferredVersion.Version
		}
		// Upstream's preferred version where a group serves two.
		preferred := map[string]string{"autoscaling": "v2"}
		for _, rc := range resourceCases {
			want, ok := preferred[rc.gvr.Group]
			if !ok {
				want = rc.gvr.Version
			}
			if v, ok := got[rc.gvr.Group]; !ok || v != want {
				t.Errorf("group %q: preferred version %q, want %q", rc.gvr.Group, v, want)
			}
		}
	})

	t.Run("/openapi/v3 lists the group versions", func(t *testing.T) {
		body, err := rc.Get().AbsPath("/openapi/v3").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var index struct {
			Paths map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(body, &index); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"api/v1", "apis/apps/v1", "apis/events.k8s.io/v1", "apis/resource.k8s.io/v1"} {
			if _, ok := index.Paths[p]; !ok {
				t.Errorf("/openapi/v3 lacks %s", p)
			}
		}
	})

	t.Run("/openapi/v3 group document", func(t *testing.T) {
		body, err := rc.Get().AbsPath("/openapi/v3/apis/apps/v1").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Components struct {
				Schemas map[string]struct {
					GVK []map[string]string `json:"x-kubernetes-group-version-kind"`
				} `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		d, ok := doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
		if !ok || len(d.GVK) != 1 || d.GVK[0]["kind"] != "Deployment" || d.GVK[0]["group"] != "apps" {
			t.Errorf("Deployment schema in /openapi/v3/apis/apps/v1 = %+v, want one with its group-version-kind (kubectl explain reads it)", d)
		}
	})

	t.Run("priority and fairness classifies requests", func(t *testing.T) {
		hc, err := rest.HTTPClientFor(config)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, config.Host+"/api/v1/namespaces/default", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") == "" || resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID") == "" {
			t.Errorf("response headers %v lack the flow schema and priority level UIDs", resp.Header)
		}
	})

	t.Run("/openapi/v2", func(t *testing.T) {
		body, err := rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), `"io.k8s.api.apps.v1.Deployment"`) {
			t.Errorf("/openapi/v2 has no io.k8s.api.apps.v1.Deployment definition")
		}
	})
}
