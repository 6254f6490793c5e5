package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestBadInput sends requests a client gets wrong and checks each is
// answered with the status upstream gives, never a 500, and that the server
// keeps serving afterwards.
func TestBadInput(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	cms := client.CoreV1().ConfigMaps(ns)
	configMap := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	// raw sends body to path with the content type, returning the error.
	raw := func(verb, path, contentType, body string, params map[string]string) error {
		req := client.CoreV1().RESTClient().Verb(verb).AbsPath(path).SetHeader("Content-Type", contentType).Body([]byte(body))
		for k, v := range params {
			req = req.Param(k, v)
		}
		return req.Do(ctx).Error()
	}
	cmPath := "/api/v1/namespaces/" + ns + "/configmaps"

	t.Run("invalid names are 422 at metadata.name", func(t *testing.T) {
		for _, name := range []string{
			"bad%name",               // not a path segment: generic check
			"..",                     // not a path segment: generic check
			"Upper_Case",             // not a DNS subdomain: needs api/validation
			strings.Repeat("a", 254), // too long: needs api/validation
		} {
			_, err := cms.Create(ctx, configMap(name), metav1.CreateOptions{})
			if err == nil {
				t.Errorf("name %.20q accepted", name)
				continue
			}
			if statusCode(err) != 422 {
				t.Errorf("name %.20q: %v, want 422", name, err)
				continue
			}
			wantCause(t, wantStatus(t, err, 422), "metadata.name")
		}
	})

	t.Run("missing name is 422", func(t *testing.T) {
		_, err := cms.Create(ctx, configMap(""), metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "metadata.name")
	})

	t.Run("generateName makes a name", func(t *testing.T) {
		out, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.Name, "gen-") || len(out.Name) <= len("gen-") {
			t.Errorf("generated name %q, want gen- and a suffix", out.Name)
		}
	})

	t.Run("invalid spec is 422 with the field path", func(t *testing.T) {
		// needs api/validation
		p := samplePod(ns).(*corev1.Pod)
		p.Name = uniqueName("bad")
		p.Spec.Containers[0].Image = ""
		_, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		wantCause(t, wantStatus(t, err, 422), "spec.containers[0].image")
	})

	t.Run("create twice is 409 AlreadyExists", func(t *testing.T) {
		name := uniqueName("dup")
		if _, err := cms.Create(ctx, configMap(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := cms.Create(ctx, configMap(name), metav1.CreateOptions{})
		if se := wantStatus(t, err, 409); se.ErrStatus.Reason != metav1.StatusReasonAlreadyExists {
			t.Errorf("reason = %s, want AlreadyExists", se.ErrStatus.Reason)
		}
	})

	t.Run("missing object is 404", func(t *testing.T) {
		_, err := cms.Get(ctx, "no-such-configmap", metav1.GetOptions{})
		wantStatus(t, err, 404)
		wantStatus(t, cms.Delete(ctx, "no-such-configmap", metav1.DeleteOptions{}), 404)
	})

	t.Run("unknown resource is 404", func(t *testing.T) {
		err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/" + ns + "/nosuchthings").Do(ctx).Error()
		wantStatus(t, err, 404)
	})

	t.Run("malformed JSON is 400", func(t *testing.T) {
		wantStatus(t, raw("POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":`, nil), 400)
	})

	t.Run("wrong kind in body is 400", func(t *testing.T) {
		wantStatus(t, raw("POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"wrong-kind"}}`, nil), 400)
	})

	t.Run("namespace in body differing from the URL is 400", func(t *testing.T) {
		wantStatus(t, raw("POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"elsewhere","namespace":"other"}}`, nil), 400)
	})

	t.Run("unsupported media type is 415", func(t *testing.T) {
		wantStatus(t, raw("POST", cmPath, "text/plain", `name: x`, nil), 415)
	})

	t.Run("unknown fields", func(t *testing.T) {
		body := func(name string) string {
			return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"v"},"bogus":true}`
		}
		err := raw("POST", cmPath, "application/json", body(uniqueName("strict")), map[string]string{"fieldValidation": "Strict"})
		se := wantStatus(t, err, 400)
		if !strings.Contains(se.ErrStatus.Message, `unknown field "bogus"`) {
			t.Errorf("strict message %q does not name the unknown field", se.ErrStatus.Message)
		}
		var warnings []string
		res := client.CoreV1().RESTClient().Post().AbsPath(cmPath).Param("fieldValidation", "Warn").
			SetHeader("Content-Type", "application/json").Body([]byte(body(uniqueName("warn")))).Do(ctx)
		if err := res.Error(); err != nil {
			t.Fatalf("fieldValidation=Warn: %v", err)
		}
		for _, w := range res.Warnings() {
			warnings = append(warnings, w.Text)
		}
		if !strings.Contains(strings.Join(warnings, "\n"), `unknown field "bogus"`) {
			t.Errorf("fieldValidation=Warn warnings %q do not name the unknown field", warnings)
		}
		if err := raw("POST", cmPath, "application/json", body(uniqueName("ignore")), map[string]string{"fieldValidation": "Ignore"}); err != nil {
			t.Errorf("fieldValidation=Ignore: %v", err)
		}
		// Duplicate fields are refused by Strict too.
		dup := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup-field","name":"again"}}`
		wantStatus(t, raw("POST", cmPath, "application/json", dup, map[string]string{"fieldValidation": "Strict"}), 400)
	})

	t.Run("bad patches", func(t *testing.T) {
		name := uniqueName("patched")
		if _, err := cms.Create(ctx, configMap(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := cms.Patch(ctx, name, types.JSONPatchType, []byte(`not a patch`), metav1.PatchOptions{})
		wantStatus(t, err, 400)
		_, err = cms.Patch(ctx, name, types.MergePatchType, []byte(`{"data":`), metav1.PatchOptions{})
		wantStatus(t, err, 400)
		// A failing test operation is a well-formed patch that cannot apply.
		_, err = cms.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"test","path":"/data/k","value":"nope"}]`), metav1.PatchOptions{})
		wantStatus(t, err, 422)
		_, err = cms.Patch(ctx, name, types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`"}}`), metav1.PatchOptions{})
		wantCause(t, wantStatus(t, err, 422), "fieldManager")
		_, err = cms.Patch(ctx, "no-such-configmap", types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{})
		wantStatus(t, err, 404)
	})

	t.Run("bad selectors and versions are 400", func(t *testing.T) {
		for _, opts := range []metav1.ListOptions{
			{LabelSelector: "a in (b"},
			{FieldSelector: "spec.nosuchfield=x"},
			{ResourceVersion: "not-a-number", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			{Continue: "not-a-token", Limit: 1},
		} {
			_, err := cms.List(ctx, opts)
			if statusCode(err) != 400 {
				t.Errorf("list with %+v: %v, want 400", opts, err)
			}
		}
	})

	t.Run("invalid list options are 422", func(t *testing.T) {
		_, err := cms.List(ctx, metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		wantCause(t, wantStatus(t, err, 422), "resourceVersionMatch")
	})

	t.Run("server keeps serving", func(t *testing.T) {
		body, err := client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil || string(body) != "ok" {
			t.Fatalf("/readyz after bad input = %q, %v", body, err)
		}
		if _, err := cms.Create(ctx, configMap(uniqueName("after")), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create after bad input: %v", err)
		}
	})
}
