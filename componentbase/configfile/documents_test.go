package configfile

import (
	"strconv"
	"strings"
	"testing"
)

func TestDocuments(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    []string // index:apiVersion/kind of each document
		wantErr string
	}{
		{"none", "", nil, ""},
		{"one", header, []string{"0:test.config.trireme.dev/v1/TestConfiguration"}, ""},
		{"several, empty ones left out but counted", "---\n" + header + "---\n# nothing\n---\napiVersion: v1\nkind: ConfigMap\n",
			[]string{"0:test.config.trireme.dev/v1/TestConfiguration", "2:v1/ConfigMap"}, ""},
		{"JSON", `{"apiVersion":"v1","kind":"ConfigMap"}`, []string{"0:v1/ConfigMap"}, ""},
		{"no kind", "name: a\n", []string{"0:/"}, ""},
		{"not an object", header + "---\n- a\n- b\n", nil, "document 1"},
		{"bad YAML", "a: [\n", nil, "document 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Documents([]byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range docs {
				got = append(got, strconv.Itoa(d.Index)+":"+d.APIVersion+"/"+d.Kind)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("documents = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDocumentInto(t *testing.T) {
	type plain struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Name       string            `json:"name"`
		Values     map[string]any    `json:"values"`
		Labels     map[string]string `json:"labels"`
	}
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"known fields", "kind: Plain\nname: a\nvalues: {replicas: 3}\n", ""},
		{"unknown field", "kind: Plain\nnmae: a\n", `unknown field "nmae"`},
		{"duplicate field", "kind: Plain\nname: a\nname: b\n", `"name" already set`},
		{"wrong type", "kind: Plain\nlabels: 3\n", "labels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Documents([]byte(tt.data))
			if err != nil || len(docs) != 1 {
				t.Fatalf("Documents = %v, %v", docs, err)
			}
			var p plain
			err = docs[0].Into(&p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != "a" || p.Kind != "Plain" || p.Values["replicas"] != float64(3) {
				t.Errorf("decoded %+v", p)
			}
		})
	}
}
