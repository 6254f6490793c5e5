package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
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

	t.Run("bad base64 in a Secret is refused", func(t *testing.T) {
		secrets := client.CoreV1().Secrets(ns)
		bad := `"data":{"k":"(hidden)"}`
		err := raw("POST", "/api/v1/namespaces/"+ns+"/secrets", "application/json",
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"bad-base64"},`+bad+`}`, nil)
		wantStatus(t, err, 400)
		if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "base64"}, Data: map[string][]byte{"k": []byte("v")}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// As upstream: the patched object does not decode.
		_, err = secrets.Patch(ctx, "base64", types.MergePatchType, []byte(`{`+bad+`}`), metav1.PatchOptions{})
		wantCause(t, wantStatus(t, err, 422), "patch")
		// What a console sends when it applies an edit view whose values
		// it hid.
		_, err = secrets.Patch(ctx, "base64", types.ApplyPatchType,
			[]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"base64"},`+bad+`}`), metav1.PatchOptions{FieldManager: "test", Force: ptr.To(true)})
		wantStatus(t, err, 400)
		got, err := secrets.Get(ctx, "base64", metav1.GetOptions{})
		if err != nil || string(got.Data["k"]) != "v" {
			t.Fatalf("after refused patches: %v, data %q, want v", err, got.Data["k"])
		}
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

// rawCreate POSTs body as-is, so the test controls every byte the server
// sees, and returns the HTTP status and the metav1.Status the server sent,
// failing unless the reply is a Status on the wire (kind Status, v1).
func rawCreate(t *testing.T, ns, resource, contentType string, body []byte) (int, metav1.Status) {
	t.Helper()
	res := client.CoreV1().RESTClient().Post().Namespace(ns).Resource(resource).
		SetHeader("Content-Type", contentType).Body(body).Do(testContext(t))
	var code int
	res.StatusCode(&code)
	raw, err := res.Raw()
	if err == nil {
		t.Fatalf("POST %s accepted a bad object (HTTP %d)", resource, code)
	}
	var status metav1.Status
	if jerr := json.Unmarshal(raw, &status); jerr != nil || status.Kind != "Status" || status.APIVersion != "v1" {
		t.Fatalf("POST %s: want a v1 Status body, got HTTP %d %q (%v)", resource, code, raw, err)
	}
	if int(status.Code) != code {
		t.Errorf("Status.code %d differs from HTTP status %d", status.Code, code)
	}
	return code, status
}

// jsonBody encodes obj, a manifest built from maps.
func jsonBody(t *testing.T, obj map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// podJSON is a Pod manifest with spec.
func podJSON(name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name}, "spec": spec}
}

// containerJSON is a container named main running busybox, with extra
// fields.
func containerJSON(extra map[string]any) map[string]any {
	c := map[string]any{"name": "main", "image": "busybox"}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// configMapJSON is a ConfigMap manifest with data.
func configMapJSON(name string, data map[string]string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data}
}

// TestInvalidObjectsAreRejectedWithFieldPaths checks the Status a client
// gets on the wire for invalid objects, and what kubectl prints from it.
func TestInvalidObjectsAreRejectedWithFieldPaths(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name, resource string
		obj            map[string]any
		wantField      string // the field path of the one cause
		wantMessage    string // what kubectl prints, as upstream words it
	}{
		{
			name: "bad name", resource: "configmaps",
			obj:         configMapJSON("Bad_Name", map[string]string{"a": "b"}),
			wantField:   "metadata.name",
			wantMessage: `The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
		},
		{
			name: "pod without containers", resource: "pods",
			obj:         podJSON("empty", map[string]any{}),
			wantField:   "spec.containers",
			wantMessage: `The Pod "empty" is invalid: spec.containers: Required value`,
		},
		{
			name: "duplicate container port names", resource: "pods",
			obj: podJSON("dup-ports", map[string]any{"containers": []any{containerJSON(map[string]any{"ports": []any{
				map[string]any{"name": "http", "containerPort": 80},
				map[string]any{"name": "http", "containerPort": 81},
			}})}}),
			wantField:   "spec.containers[0].ports[1].name",
			wantMessage: `The Pod "dup-ports" is invalid: spec.containers[0].ports[1].name: Duplicate value: "http"`,
		},
		{
			name: "duplicate service port names", resource: "services",
			obj: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "dup-ports"},
				"spec": map[string]any{"selector": map[string]any{"app": "x"}, "ports": []any{
					map[string]any{"name": "http", "port": 80},
					map[string]any{"name": "http", "port": 81},
				}}},
			wantField:   "spec.ports[1].name",
			wantMessage: `The Service "dup-ports" is invalid: spec.ports[1].name: Duplicate value: "http"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := jsonBody(t, tt.obj)
			code, status := rawCreate(t, ns, tt.resource, "application/json", body)
			if code != http.StatusUnprocessableEntity || status.Reason != metav1.StatusReasonInvalid {
				t.Fatalf("HTTP %d reason %q, want 422 Invalid: %+v", code, status.Reason, status)
			}
			if d := status.Details; d == nil || len(d.Causes) != 1 || d.Causes[0].Field != tt.wantField {
				t.Fatalf("status details = %+v, want one cause on %s", status.Details, tt.wantField)
			}
			res := kubectlStdin(t, string(body), "-n", ns, "create", "-f", "-")
			if res.ExitCode != 1 || !strings.Contains(res.Stderr, tt.wantMessage) {
				t.Fatalf("kubectl create: want exit 1 and %q, got %s", tt.wantMessage, res)
			}
			assertServing(t)
		})
	}
}

// TestOversizedObjectsAreRejected sends objects over each size limit and
// checks they are refused, not stored, and the server keeps serving.
func TestOversizedObjectsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name, resource string
		obj            map[string]any
		// check judges the answer; the upstream answers differ by which
		// limit the object meets first.
		check func(t *testing.T, code int, status metav1.Status)
	}{
		{
			// The generic server reads at most 3 MiB of a request body.
			name: "body over the request limit", resource: "configmaps",
			obj: configMapJSON("huge", map[string]string{"a": strings.Repeat("x", 4<<20)}),
			check: func(t *testing.T, code int, status metav1.Status) {
				if code != http.StatusRequestEntityTooLarge || status.Reason != metav1.StatusReasonRequestEntityTooLarge ||
					status.Message != "Request entity too large: limit is 3145728" {
					t.Fatalf("HTTP %d %q %q, want 413 RequestEntityTooLarge \"Request entity too large: limit is 3145728\"", code, status.Reason, status.Message)
				}
			},
		},
		{
			// ConfigMap validation caps data at 1 MiB.
			name: "configmap data over 1MiB", resource: "configmaps",
			obj: configMapJSON("big-data", map[string]string{"a": strings.Repeat("x", 1<<20+1024)}),
			check: func(t *testing.T, code int, status metav1.Status) {
				if code != http.StatusUnprocessableEntity || !strings.Contains(status.Message, "Too long") || !strings.Contains(status.Message, "1048576") {
					t.Fatalf("HTTP %d %q, want 422 with \"Too long\" and the 1048576-byte limit", code, status.Message)
				}
			},
		},
		{
			// Nothing validates a container's args' size: etcd's 1.5 MiB
			// request limit is what stops this pod. Upstream relays etcd's
			// "etcdserver: request is too large"; a 413 is as good.
			name: "pod over the storage limit", resource: "pods",
			obj: podJSON("big-args", map[string]any{"containers": []any{containerJSON(map[string]any{"args": []string{strings.Repeat("x", 1800<<10)}})}}),
			check: func(t *testing.T, code int, status metav1.Status) {
				if code != http.StatusRequestEntityTooLarge && !strings.Contains(status.Message, "request is too large") {
					t.Fatalf("HTTP %d %q, want 413 or etcd's \"request is too large\"", code, status.Message)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, status := rawCreate(t, ns, tt.resource, "application/json", jsonBody(t, tt.obj))
			tt.check(t, code, status)
			assertServing(t)
			name := tt.obj["metadata"].(map[string]any)["name"].(string)
			res := kubectl(t, "-n", ns, "get", tt.resource, name)
			if res.ExitCode == 0 {
				t.Fatalf("%s %s was stored although rejected", tt.resource, name)
			}
		})
	}
}

// TestMalformedBodies sends bodies that do not parse, to the API and
// through kubectl.
func TestMalformedBodies(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name, contentType, body string
		// kubectl parses its input first: syntax errors never reach the
		// server and fail with kubectl's own "error: ..."; a well-formed
		// file of the wrong shape gets the server's 400.
		kubectlErr string
	}{
		{name: "truncated JSON", contentType: "application/json", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"`, kubectlErr: "error: "},
		{name: "JSON with a wrong type", contentType: "application/json", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":["a"]}`, kubectlErr: "Error from server (BadRequest): "},
		{name: "broken YAML", contentType: "application/yaml", body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [x\ndata:\n  a: b\n", kubectlErr: "error: "},
	}
	for _, tt := range tests {
		t.Run("API "+tt.name, func(t *testing.T) {
			code, status := rawCreate(t, ns, "configmaps", tt.contentType, []byte(tt.body))
			if code != http.StatusBadRequest || status.Reason != metav1.StatusReasonBadRequest {
				t.Fatalf("HTTP %d reason %q, want a 400 BadRequest Status: %+v", code, status.Reason, status)
			}
			assertServing(t)
		})
		t.Run("kubectl "+tt.name, func(t *testing.T) {
			res := kubectlStdin(t, tt.body, "-n", ns, "create", "-f", "-")
			if res.ExitCode != 1 || !strings.HasPrefix(res.Stderr, tt.kubectlErr) {
				t.Fatalf("kubectl create of malformed input: want exit 1 and %q, got %s", tt.kubectlErr, res)
			}
			assertServing(t)
		})
	}
}
