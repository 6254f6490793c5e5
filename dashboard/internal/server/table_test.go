package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// tableWithManagedFields is a pod Table as the apiserver answers with
// includeObject=Metadata: one row whose object carries managedFields.
const tableWithManagedFields = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7","continue":"abc"},` +
	`"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"","priority":0}],` +
	`"rows":[{"cells":["web-1",1.5,null],"conditions":[{"type":"Completed","status":"False"}],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",` +
	`"metadata":{"name":"web-1","namespace":"d","uid":"u1","labels":{"note":"<script>"},"managedFields":[{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]}}}]}`

// decoded is v parsed as JSON, for comparisons that ignore key order.
func decoded(t *testing.T, v []byte) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(v, &out); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	return out
}

func TestSlimTable(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		wantErr        bool
	}{
		{
			name: "rows lose managedFields, keep the rest",
			in:   tableWithManagedFields,
			want: strings.Replace(tableWithManagedFields, `,"managedFields":[{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]`, "", 1),
		},
		{
			name: "a row without managedFields is kept",
			in:   `{"kind":"Table","rows":[{"cells":["a"],"object":{"metadata":{"name":"a"}}},{"cells":["b"],"object":{"metadata":{"name":"b","managedFields":[]}}}]}`,
			want: `{"kind":"Table","rows":[{"cells":["a"],"object":{"metadata":{"name":"a"}}},{"cells":["b"],"object":{"metadata":{"name":"b"}}}]}`,
		},
		{
			name: "a Table without objects is unchanged",
			in:   `{"kind":"Table","rows":[{"cells":["a"]}]}`,
			want: `{"kind":"Table","rows":[{"cells":["a"]}]}`,
		},
		{
			name: "a plain object (no Table served) is unchanged",
			in:   `{"kind":"Pod","metadata":{"name":"p","managedFields":[{"manager":"m"}]}}`,
			want: `{"kind":"Pod","metadata":{"name":"p","managedFields":[{"manager":"m"}]}}`,
		},
		{
			name: "a label that names managedFields is data, not metadata",
			in:   `{"kind":"Table","rows":[{"cells":["a"],"object":{"metadata":{"name":"a","labels":{"\"managedFields\"":"x"}}}}]}`,
			want: `{"kind":"Table","rows":[{"cells":["a"],"object":{"metadata":{"name":"a","labels":{"\"managedFields\"":"x"}}}}]}`,
		},
		{
			name: "managedFields first, only, or written twice",
			in:   `{"rows":[{"object":{"metadata":{"managedFields":[],"name":"a"}}},{"object":{"metadata":{"managedFields":[{}]}}},{"object":{"metadata":{"name":"c","managedFields":[],"managedFields":[]}}}]}`,
			want: `{"rows":[{"object":{"metadata":{"name":"a"}}},{"object":{"metadata":{}}},{"object":{"metadata":{"name":"c"}}}]}`,
		},
		{
			name: "indented, with quotes and braces inside strings",
			in:   "{\n \"rows\" : [ {\"cells\": [\"a\\\"}]\"],\n  \"object\" : { \"metadata\" : { \"name\" : \"a{\" ,\n \"managedFields\" : [ {\"manager\": \"x]\"} ] } } } ]\n}",
			want: `{"rows":[{"cells":["a\"}]"],"object":{"metadata":{"name":"a{"}}}]}`,
		},
		{
			name: "rows not a list is passed on",
			in:   `{"kind":"Table","rows":{"managedFields":1}}`,
			want: `{"kind":"Table","rows":{"managedFields":1}}`,
		},
		{name: "truncated", in: `{"kind":"Table","rows":[{"managedFields"`, wantErr: true},
		{name: "a member without its colon", in: `{"rows" [{"object":{"metadata":{"managedFields":[]}}}]}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := slimTable([]byte(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("= %s, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(decoded(t, got), decoded(t, []byte(tc.want))) {
				t.Fatalf("= %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSlimTableEvent(t *testing.T) {
	slim, err := slimTable([]byte(tableWithManagedFields))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"a row's event", `{"type":"MODIFIED","object":` + tableWithManagedFields + `}`, `{"type":"MODIFIED","object":` + string(slim) + `}`},
		{"an expired watch's Status", `{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}}`, `{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}}`},
		{"unreadable: passed on", `{"type":"ADDED","object":{"managedFields"`, `{"type":"ADDED","object":{"managedFields"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slimTableEvent([]byte(tc.in))
			if !json.Valid([]byte(tc.want)) {
				if string(got) != tc.want {
					t.Fatalf("= %s, want it unchanged", got)
				}
				return
			}
			if !reflect.DeepEqual(decoded(t, got), decoded(t, []byte(tc.want))) {
				t.Fatalf("= %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestTableRelaySlim reads a Table and a Table watch through the console:
// the rows come without managedFields, the label's markup as data.
func TestTableRelaySlim(t *testing.T) {
	s, _, _ := newServer(t)
	h := s.Handler()
	user := sessionCookie(t, s, "good")
	for _, tc := range []struct{ name, path string }{
		{"list", "/api/k8s/api/v1/pods?as=table&includeObject=Metadata&limit=500"},
		{"watch", "/api/watch/api/v1/pods?as=table&includeObject=Metadata&resourceVersion=7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, h, "GET", tc.path, "", nil, user)
			body := w.Body.String()
			if w.Code != 200 || strings.Contains(body, "managedFields") || !strings.Contains(body, `"web-1"`) {
				t.Fatalf("= %d %s", w.Code, body)
			}
			if tc.name == "watch" {
				if !strings.HasPrefix(body, "data: ") {
					t.Fatalf("not an event stream: %s", body)
				}
				body = strings.TrimSpace(strings.TrimPrefix(body, "data: "))
			}
			if !json.Valid([]byte(body)) {
				t.Fatalf("invalid JSON: %s", body)
			}
		})
	}
}

// BenchmarkSlimTable slims a page of 1,000 pod rows, the page's list size.
func BenchmarkSlimTable(b *testing.B) {
	var rows []string
	for i := range 1000 {
		rows = append(rows, fmt.Sprintf(`{"cells":["pod-%04d","0/1","Pending","0","20s","<none>","node-1","<none>","<none>"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"pod-%04d","namespace":"bench","uid":"3bb44d6f-cbc3-46ee-a9f0-04e7a791f%03d","resourceVersion":"325","generation":1,"creationTimestamp":"2026-12-04T04:58:58Z","labels":{"app":"bench"},"managedFields":[{"manager":"dashboard.test","operation":"Update","apiVersion":"v1","time":"2026-12-04T04:58:58Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{}}},"f:nodeName":{}}}}]}}}`, i, i, i%1000))
	}
	in := []byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},"rows":[` + strings.Join(rows, ",") + `]}`)
	b.SetBytes(int64(len(in)))
	var out []byte
	for b.Loop() {
		var err error
		if out, err = slimTable(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out))/float64(len(in)), "out/in")
	if bytes.Contains(out, managedFieldsKey) {
		b.Fatal("managedFields kept")
	}
}

// FuzzSlimTable holds slimTable to what decoding does: for valid JSON the
// answer is valid JSON equal to the input with every row's
// object.metadata.managedFields deleted; for any input it does not panic.
func FuzzSlimTable(f *testing.F) {
	for _, seed := range []string{
		tableWithManagedFields,
		`{"rows":[{"object":{"metadata":{"managedFields":[],"name":"a"}}},{"object":{"metadata":{"managedFields":[{}]}}}]}`,
		`{"rows":[{"object":{"metadata":{"name":"c","managedFields":[],"managedFields":[]}}}],"rows":[]}`,
		"{\n \"rows\" : [ {\"cells\": [\"a\\\"}]\"], \"object\" : { \"metadata\" : { \"managedFields\" : [ {\"m\": \"x]\"} ] } } } ]\n}",
		`{"kind":"Table","rows":{"managedFields":1}}`,
		`{"kind":"Table","rows":[{"managedFields"`,
		`["managedFields"]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := slimTable(in)
		if !json.Valid(in) {
			return
		}
		if err != nil {
			t.Fatalf("valid %s: %v", in, err)
		}
		var got, want any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s slimmed to invalid %s: %v", in, out, err)
		}
		_ = json.Unmarshal(in, &want)
		if table, ok := want.(map[string]any); ok {
			rows, _ := table["rows"].([]any)
			for _, r := range rows {
				row, _ := r.(map[string]any)
				obj, _ := row["object"].(map[string]any)
				meta, _ := obj["metadata"].(map[string]any)
				delete(meta, "managedFields")
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s slimmed to %s", in, out)
		}
	})
}
