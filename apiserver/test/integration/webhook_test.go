package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

// TestAdmissionWebhookService checks that a validating webhook named by a
// Service reference is called at the Service's endpoint: the host running
// the server cannot resolve "<name>.<ns>.svc", as upstream's conformance
// suite's webhooks assume it need not.
func TestAdmissionWebhookService(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	port, caBundle := serveTLS(t, "deny."+ns+".svc", http.HandlerFunc(denyLabelled))
	serviceOnLoopback(t, ns, "deny", port)

	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.trireme.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service:  &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "deny", Path: ptr.To("/validate")},
				CABundle: caBundle,
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		}},
	}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.WithoutCancel(ctx), cfg.Name, metav1.DeleteOptions{})
	})

	// The webhook manager picks the configuration up a moment later.
	testwait.For(t, 20*time.Second, "labelled ConfigMap refused by the webhook", func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "denied-", Labels: map[string]string{"deny": "yes"}}}
		_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if err == nil {
			return false, fmt.Errorf("created")
		}
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "labelled deny"), err
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allowed"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Errorf("unlabelled ConfigMap: %v", err)
	}
}

// denyLabelled answers AdmissionReviews: objects labelled deny=yes are
// refused.
func denyLabelled(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("bad review: %v", err), http.StatusBadRequest)
		return
	}
	var obj metav1.PartialObjectMetadata
	_ = json.Unmarshal(review.Request.Object.Raw, &obj)
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: obj.Labels["deny"] != "yes"}
	if !resp.Allowed {
		resp.Result = &metav1.Status{Message: "labelled deny", Code: http.StatusForbidden}
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}
