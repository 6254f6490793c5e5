package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"trireme.dev/componentbase/testwait"
)

// TestBuiltinAPIServices checks that every built-in group version has a
// local APIService that is Available, and that the legacy group list —
// which the aggregator builds from APIServices — has the core groups, the
// CRD group and the aggregator's own.
func TestBuiltinAPIServices(t *testing.T) {
	ctx := testContext(t)
	agg := aggregatorclient.NewForConfigOrDie(config)
	list, err := agg.ApiregistrationV1().APIServices().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]apiregistrationv1.APIService{}
	for _, s := range list.Items {
		byName[s.Name] = s
	}
	for _, name := range []string{"v1.", "v1.apps", "v1.apiextensions.k8s.io", "v2.autoscaling", "v1.rbac.authorization.k8s.io"} {
		s, ok := byName[name]
		if !ok {
			t.Errorf("no APIService %s", name)
			continue
		}
		if s.Spec.Service != nil || !available(&s) {
			t.Errorf("APIService %s: service %v, conditions %v; want a local, Available one", name, s.Spec.Service, s.Status.Conditions)
		}
	}
	groups, err := client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	// The legacy list starts with core, then the aggregator's group, then
	// the rest by priority, as on any cluster.
	if len(names) < 3 || names[0] != "" || names[1] != "apiregistration.k8s.io" || names[2] != "apps" {
		t.Errorf("groups start %v, want core, apiregistration.k8s.io, apps", names[:min(3, len(names))])
	}
	for _, want := range []string{"apiextensions.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io"} {
		if !containsString(names, want) {
			t.Errorf("/apis does not list %s", want)
		}
	}
}

// TestAPIServiceUnavailable checks that an APIService whose Service does
// not exist is marked unavailable with a reason, that requests for its
// group fail with 503, and that the rest of the API is unaffected.
func TestAPIServiceUnavailable(t *testing.T) {
	ctx := testContext(t)
	ns := newNamespace(t)
	agg := aggregatorclient.NewForConfigOrDie(config)
	group := uniqueName("missing") + ".agg.it.trireme.dev"
	svc := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1." + group},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: group, Version: "v1",
			Service:               &apiregistrationv1.ServiceReference{Namespace: ns, Name: "nowhere"},
			InsecureSkipTLSVerify: true,
			GroupPriorityMinimum:  100, VersionPriority: 10,
		},
	}
	if _, err := agg.ApiregistrationV1().APIServices().Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = agg.ApiregistrationV1().APIServices().Delete(context.WithoutCancel(ctx), svc.Name, metav1.DeleteOptions{})
	})
	testwait.For(t, 20*time.Second, "APIService unavailable for want of its Service", func(ctx context.Context) (bool, error) {
		got, err := agg.ApiregistrationV1().APIServices().Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiregistrationv1.Available {
				return c.Status == apiregistrationv1.ConditionFalse && c.Reason == "ServiceNotFound", fmt.Errorf("condition %+v", c)
			}
		}
		return false, fmt.Errorf("no Available condition")
	})
	_, err := client.Discovery().RESTClient().Get().AbsPath("/apis", group, "v1").DoRaw(ctx)
	wantStatus(t, err, 503)
	// Discovery of everything else still works; clients see the group as
	// failed, not the whole API.
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "still-works"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("core API with an APIService down: %v", err)
	}
	if _, err := client.Discovery().ServerResourcesForGroupVersion("apps/v1"); err != nil {
		t.Errorf("apps discovery with an APIService down: %v", err)
	}
}

// TestExtensionAuthenticationPublished checks that extension apiservers can
// learn from kube-system/extension-apiserver-authentication which CA signs
// the front proxy's client certificate and which headers carry the user.
func TestExtensionAuthenticationPublished(t *testing.T) {
	cm, err := client.CoreV1().ConfigMaps("kube-system").Get(testContext(t), "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"client-ca-file":                     "BEGIN CERTIFICATE",
		"requestheader-client-ca-file":       "BEGIN CERTIFICATE",
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
		"requestheader-allowed-names":        `["front-proxy-client"]`,
	} {
		if !strings.Contains(cm.Data[key], want) {
			t.Errorf("%s = %q, want it to contain %q", key, cm.Data[key], want)
		}
	}
	if cm.Data["client-ca-file"] == cm.Data["requestheader-client-ca-file"] {
		t.Error("the front proxy's CA is the cluster CA; it must be its own")
	}
}

func available(s *apiregistrationv1.APIService) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
