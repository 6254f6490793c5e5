package configfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The kinds below stand for a component's: TestConfiguration holds plugin
// args decoded as nested objects, the way a KubeSchedulerConfiguration
// does; OtherConfiguration is a second kind of the same group.

var testGV = schema.GroupVersion{Group: "test.config.trireme.dev", Version: "v1"}

type TestConfiguration struct {
	metav1.TypeMeta `json:",inline"`
	Name            string         `json:"name,omitempty"`
	Count           int32          `json:"count,omitempty"`
	Plugins         []PluginConfig `json:"plugins,omitempty"`
}

type PluginConfig struct {
	Name string               `json:"name"`
	Args runtime.RawExtension `json:"args,omitempty"`
}

type WeightArgs struct {
	metav1.TypeMeta `json:",inline"`
	Weight          int32 `json:"weight,omitempty"`
}

type OtherConfiguration struct {
	metav1.TypeMeta `json:",inline"`
}

func (c *TestConfiguration) DeepCopyObject() runtime.Object {
	out := *c
	out.Plugins = append([]PluginConfig(nil), c.Plugins...)
	return &out
}

func (a *WeightArgs) DeepCopyObject() runtime.Object {
	out := *a
	return &out
}

func (c *OtherConfiguration) DeepCopyObject() runtime.Object {
	out := *c
	return &out
}

// DecodeNestedObjects decodes each plugin's args as its <name>Args kind,
// leaving alone those of a plugin with no registered kind.
func (c *TestConfiguration) DecodeNestedObjects(d runtime.Decoder) error {
	for i := range c.Plugins {
		p := &c.Plugins[i]
		gvk := testGV.WithKind(p.Name + "Args")
		if len(p.Args.Raw) == 0 || !testScheme.Recognizes(gvk) {
			continue
		}
		obj, got, err := d.Decode(p.Args.Raw, &gvk, nil)
		if err != nil {
			return err
		}
		if got.Kind != gvk.Kind {
			return fmt.Errorf("args of %s: got %s, want %s", p.Name, got.Kind, gvk.Kind)
		}
		p.Args.Object = obj
	}
	return nil
}

var testScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypes(testGV, &TestConfiguration{}, &WeightArgs{}, &OtherConfiguration{})
	return s
}()

var testKind = Kind[*TestConfiguration]{
	Scheme: testScheme,
	Default: func(c *TestConfiguration) {
		if c.Count == 0 {
			c.Count = 1
		}
	},
	Validate: func(c *TestConfiguration) error {
		if c.Count < 0 {
			return errors.New("count: must not be negative")
		}
		return nil
	},
}

const header = "apiVersion: test.config.trireme.dev/v1\nkind: TestConfiguration\n"

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr []string // substrings; none means valid
		check   func(t *testing.T, c *TestConfiguration)
	}{
		{
			name:  "kind only is defaulted",
			data:  header,
			check: func(t *testing.T, c *TestConfiguration) { wantCount(t, c, 1) },
		},
		{
			name: "values are kept",
			data: header + "name: a\ncount: 3\n",
			check: func(t *testing.T, c *TestConfiguration) {
				wantCount(t, c, 3)
				if c.Name != "a" || c.Kind != "TestConfiguration" {
					t.Errorf("got %+v", c)
				}
			},
		},
		{
			name:  "JSON",
			data:  `{"apiVersion":"test.config.trireme.dev/v1","kind":"TestConfiguration","count":4}`,
			check: func(t *testing.T, c *TestConfiguration) { wantCount(t, c, 4) },
		},
		{
			name: "nested args are decoded",
			data: header + "plugins:\n- name: Weight\n  args:\n    weight: 7\n- name: Unknown\n  args:\n    anything: 1\n",
			check: func(t *testing.T, c *TestConfiguration) {
				a, ok := c.Plugins[0].Args.Object.(*WeightArgs)
				if !ok || a.Weight != 7 {
					t.Fatalf("args = %#v", c.Plugins[0].Args.Object)
				}
				if a.Kind != "" || a.APIVersion != "" {
					t.Errorf("nested args kept type %v", a.TypeMeta)
				}
				if c.Plugins[1].Args.Object != nil {
					t.Errorf("unknown plugin's args decoded: %#v", c.Plugins[1].Args.Object)
				}
			},
		},
		{name: "unknown field", data: header + "nmae: a\n", wantErr: []string{"decode config", `unknown field "nmae"`}},
		{name: "duplicate field", data: header + "name: a\nname: b\n", wantErr: []string{"decode config", `"name" already set`}},
		{name: "duplicate JSON field", data: `{"apiVersion":"test.config.trireme.dev/v1","kind":"TestConfiguration","name":"a","name":"b"}`,
			wantErr: []string{"decode config", `duplicate field "name"`}},
		{name: "unknown nested field", data: header + "plugins:\n- name: Weight\n  args:\n    weigth: 7\n", wantErr: []string{`unknown field "weigth"`}},
		{name: "wrong type", data: header + "count: many\n", wantErr: []string{"decode config", "count"}},
		{name: "other kind of the scheme", data: "apiVersion: test.config.trireme.dev/v1\nkind: OtherConfiguration\n",
			wantErr: []string{"got OtherConfiguration (test.config.trireme.dev/v1), want TestConfiguration (test.config.trireme.dev/v1)"}},
		{name: "kind the scheme lacks", data: "apiVersion: v1\nkind: ConfigMap\n",
			wantErr: []string{"want TestConfiguration (test.config.trireme.dev/v1)", `no kind "ConfigMap" is registered`}},
		{name: "no kind", data: "name: a\n", wantErr: []string{"want TestConfiguration (test.config.trireme.dev/v1)", "'Kind' is missing"}},
		{name: "no apiVersion", data: "kind: TestConfiguration\n", wantErr: []string{"want TestConfiguration"}},
		{name: "empty", data: "", wantErr: []string{"want TestConfiguration"}},
		{name: "not YAML", data: "{{", wantErr: []string{"decode config"}},
		{name: "invalid", data: header + "count: -1\n", wantErr: []string{"invalid TestConfiguration: count: must not be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := testKind.Decode([]byte(tt.data))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", c)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func wantCount(t *testing.T, c *TestConfiguration, n int32) {
	t.Helper()
	if c.Count != n {
		t.Errorf("count = %d, want %d", c.Count, n)
	}
}

func TestDecodeWithoutHooks(t *testing.T) {
	c, err := Kind[*TestConfiguration]{Scheme: testScheme}.Decode([]byte(header + "count: -1\n"))
	if err != nil || c.Count != -1 {
		t.Fatalf("got %+v, %v; want the file's values, neither defaulted nor validated", c, err)
	}
}

func TestDecodeMisuse(t *testing.T) {
	tests := []struct {
		name    string
		decode  func() error
		wantErr string
	}{
		{"no scheme", func() error { _, err := Kind[*TestConfiguration]{}.Decode([]byte(header)); return err }, "no scheme"},
		{"kind not in scheme", func() error {
			_, err := Kind[*TestConfiguration]{Scheme: runtime.NewScheme()}.Decode([]byte(header))
			return err
		}, "no kind is registered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decode(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	for path, data := range map[string]string{good: header + "count: 2\n", bad: header + "bogus: 1\n"} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		path    string
		wantErr []string
	}{
		{"good file", good, nil},
		{"missing file", filepath.Join(dir, "nope.yaml"), []string{"read config", "nope.yaml", "no such file"}},
		{"bad file names itself", bad, []string{bad + ": decode config", `unknown field "bogus"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := testKind.Load(tt.path)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				wantCount(t, c, 2)
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// FuzzDecode checks that no input makes the decoder panic, and that what
// it accepts is of the kind wanted, defaulted and valid.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(header))
	f.Add([]byte(header + "name: a\ncount: 3\nplugins:\n- name: Weight\n  args:\n    weight: 2\n"))
	f.Add([]byte(`{"apiVersion":"test.config.trireme.dev/v1","kind":"TestConfiguration","plugins":[{"name":"Weight","args":{"weight":1}}]}`))
	f.Add([]byte("apiVersion: test.config.trireme.dev/v1\nkind: OtherConfiguration\n"))
	f.Add([]byte(header + "name: a\nname: b\n"))
	f.Add([]byte("---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := testKind.Decode(data)
		if err != nil {
			return
		}
		if c == nil || c.Count < 1 {
			t.Fatalf("accepted %q as %+v: not defaulted or not valid", data, c)
		}
		for _, p := range c.Plugins {
			if _, ok := p.Args.Object.(*WeightArgs); p.Name == "Weight" && len(p.Args.Raw) > 0 && !ok {
				t.Fatalf("accepted %q with undecoded args %+v", data, p)
			}
		}
	})
}
