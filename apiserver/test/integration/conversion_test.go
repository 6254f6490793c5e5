package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

// paintCRD has two versions that differ in one field's name — v1's
// spec.color is v2's spec.colour — converted by a webhook.
const paintCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: paints.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: paints, kind: Paint}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {color: {type: string}}}}}}
  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {colour: {type: string}}}}}}
`

// TestWebhookConversion serves a CRD's versions through a conversion
// webhook behind a Service, reached at the Service's endpoint with the
// CA bundle the CRD names.
func TestWebhookConversion(t *testing.T) {
	ns := newNamespace(t)
	var calls atomic.Int64
	port, caBundle := startConversionWebhook(t, "conv."+ns+".svc", &calls)
	ctx := testContext(t)
	serviceOnLoopback(t, ns, "conv", port)

	crd := createCRD(t, paintCRD)
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{
				Service:  &apiextensionsv1.ServiceReference{Namespace: ns, Name: "conv", Path: ptr.To("/convert"), Port: ptr.To[int32](443)},
				CABundle: caBundle,
			},
		},
	}
	if _, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("switch to webhook conversion: %v", err)
	}
	group := crd.Spec.Group
	v1 := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "paints"}).Namespace(ns)
	v2 := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v2", Resource: "paints"}).Namespace(ns)

	// The handlers pick the new strategy up a moment after the update.
	testwait.For(t, 20*time.Second, "v2 created through the webhook", func(ctx context.Context) (bool, error) {
		obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"colour": "blue"}}}
		obj.SetAPIVersion(group + "/v2")
		obj.SetKind("Paint")
		obj.SetName("blue")
		_, err := v2.Create(ctx, obj, metav1.CreateOptions{})
		return err == nil && calls.Load() > 0, err
	})
	got, err := v1.Get(ctx, "blue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedString(got.Object, "spec", "color"); c != "blue" || got.GetAPIVersion() != group+"/v1" {
		t.Errorf("v2 object read as v1: %v", got.Object)
	}

	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"color": "red"}}}
	obj.SetAPIVersion(group + "/v1")
	obj.SetKind("Paint")
	obj.SetName("red")
	if _, err := v1.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list as v2: %v", err)
	}
	colours := map[string]string{}
	for _, p := range list.Items {
		c, _, _ := unstructured.NestedString(p.Object, "spec", "colour")
		colours[p.GetName()] = p.GetAPIVersion() + " " + c
	}
	if colours["red"] != group+"/v2 red" || colours["blue"] != group+"/v2 blue" {
		t.Errorf("listed as v2: %v", colours)
	}
}

// startConversionWebhook serves ConversionReviews over TLS on a loopback
// port with a certificate for host, and returns the port and the CA bundle
// that verifies it. calls counts the reviews answered.
func startConversionWebhook(t *testing.T, host string, calls *atomic.Int64) (int32, []byte) {
	t.Helper()
	return serveTLS(t, host, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("bad review: %v", err), http.StatusBadRequest)
			return
		}
		calls.Add(1)
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			converted, err := convertPaint(raw.Raw, review.Request.DesiredAPIVersion)
			if err != nil {
				resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
				break
			}
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: converted})
		}
		review.Response, review.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
}

// convertPaint renames spec.color and spec.colour for the desired version.
func convertPaint(raw []byte, desired string) ([]byte, error) {
	var obj unstructured.Unstructured
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	from, to := "colour", "color"
	if strings.HasSuffix(desired, "/v2") {
		from, to = "color", "colour"
	}
	if v, ok, _ := unstructured.NestedString(obj.Object, "spec", from); ok {
		unstructured.RemoveNestedField(obj.Object, "spec", from)
		if err := unstructured.SetNestedField(obj.Object, v, "spec", to); err != nil {
			return nil, err
		}
	}
	obj.SetAPIVersion(desired)
	return obj.MarshalJSON()
}
