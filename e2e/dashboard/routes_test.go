package dashboard_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"trireme.dev/componentbase/testwait"
	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

// httpRouteCRD is the Gateway API CRD the addons chart installs with
// Traefik.
const httpRouteCRD = "../../charts/trireme-addons/charts/traefik/crds/gateway.networking.k8s.io_httproutes.yaml"

// TestHTTPRoutes browses HTTPRoutes: the list says the API is missing
// before the CRD is installed; once it is, a route's page shows its
// Gateways, hostnames, each rule's matches, filters and weighted
// backends, and the conditions its Gateway's controller reported.
func TestHTTPRoutes(t *testing.T) {
	ns := "routes"
	cs := newNamespace(t, ns)
	ctx := t.Context()
	token := console.Token(t, cs, ns, "route-viewer", "cluster-admin")
	base := console.Start(t, srv.KubeconfigPath())
	tab := browser.New(t)
	browser.Run(t, tab, "sign in", browser.SignIn(base, token, "system:serviceaccount:"+ns+":route-viewer"))
	browser.Run(t, tab, "no Gateway API yet",
		chromedp.Navigate(base+"/#/list/gateway.networking.k8s.io/v1/httproutes"),
		browser.WaitText("#view", "This cluster does not serve httproutes"),
	)

	data, err := os.ReadFile(httpRouteCRD)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("decode %s: %v", httpRouteCRD, err)
	}
	ext, err := apiextensionsclient.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	dyn, err := dynamic.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	routes := dyn.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}).Namespace(ns)
	route := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop-route
spec:
  parentRefs:
  - name: web-gw
    sectionName: http
  hostnames: [shop.example]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /api}
      headers: [{name: x-env, value: canary}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        add: [{name: x-from, value: gateway}]
    backendRefs:
    - {name: svc-a, port: 8080, weight: 90}
    - {name: svc-b, port: 8080, weight: 10}
`), &route.Object); err != nil {
		t.Fatal(err)
	}
	// The CRD serves once it is Established.
	testwait.For(t, 30*time.Second, "HTTPRoutes served", func(ctx context.Context) (bool, error) {
		created, err := routes.Create(ctx, route, metav1.CreateOptions{})
		if err == nil {
			route = created
		}
		return err == nil, err
	})
	if err := unstructured.SetNestedSlice(route.Object, []any{map[string]any{
		"parentRef":      map[string]any{"name": "web-gw", "sectionName": "http"},
		"controllerName": "traefik.io/gateway-controller",
		"conditions": []any{map[string]any{
			"type": "Accepted", "status": "True", "reason": "Accepted", "message": "route attached",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "observedGeneration": route.GetGeneration(),
		}},
	}}, "status", "parents"); err != nil {
		t.Fatal(err)
	}
	if _, err := routes.UpdateStatus(ctx, route, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	browser.Run(t, tab, "the route in the list",
		chromedp.Navigate(base+"/#/list/gateway.networking.k8s.io/v1/httproutes?ns="+ns),
		browser.WaitText("#view", "shop-route"),
		browser.WaitText("#view", "shop.example"),
	)
	browser.Run(t, tab, "the route's page",
		chromedp.Navigate(base+"/#/obj/apis/gateway.networking.k8s.io/v1/namespaces/"+ns+"/httproutes/shop-route"),
		browser.WaitText("#route", "Gateways: "+ns+"/web-gw (http)"),
		browser.WaitText("#route", "Hostnames: shop.example"),
		browser.WaitText("#route", "path PathPrefix /api, header x-env = canary"),
		browser.WaitText("#route", "RequestHeaderModifier"),
		browser.WaitText("#route", ns+"/svc-a :8080 weight 90, "+ns+"/svc-b :8080 weight 10"),
		browser.WaitText("#route", "traefik.io/gateway-controller"),
		browser.WaitText("#route", "route attached"),
		browser.Shot(t, "httproute"),
	)
}
