package cloudconfig

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	api "trireme.dev/api/config/cloudconfig"
	"trireme.dev/componentbase/configfile"
)

// Decode reads a CloudConfiguration from data (YAML or JSON, one
// document), strictly, then defaults and validates it. Every error names
// the line of the file it is about when one can be found.
func Decode(data []byte) (*api.CloudConfiguration, error) {
	docs, err := configfile.Documents(data)
	if err != nil {
		return nil, err
	}
	switch {
	case len(docs) == 0:
		return nil, fmt.Errorf("no %s document", api.Kind)
	case len(docs) > 1:
		return nil, fmt.Errorf("document %d: want one %s document, found %d", docs[1].Index, api.Kind, len(docs))
	}
	d := docs[0]
	if d.APIVersion != api.APIVersion || d.Kind != api.Kind {
		return nil, fmt.Errorf("got kind %q of apiVersion %q, want %s (%s)", d.Kind, d.APIVersion, api.Kind, api.APIVersion)
	}
	var root yaml.Node
	// The document already converted to JSON, so it parses; root is only
	// for finding lines.
	_ = yaml.Unmarshal(d.Raw, &root)
	cfg := &api.CloudConfiguration{}
	if err := d.Into(cfg); err != nil {
		if line, what := firstMismatch(&root, reflect.TypeFor[api.CloudConfiguration]()); line > 0 {
			return nil, fmt.Errorf("line %d: %s", line, what)
		}
		return nil, err
	}
	api.SetDefaults(cfg)
	if errs := api.Validate(cfg); len(errs) > 0 {
		msgs := make([]string, 0, len(errs))
		for _, e := range errs {
			if line := lineOf(&root, e.Field); line > 0 {
				msgs = append(msgs, fmt.Sprintf("line %d: %s", line, e.Error()))
			} else {
				msgs = append(msgs, e.Error())
			}
		}
		return nil, fmt.Errorf("invalid %s: %s", api.Kind, strings.Join(msgs, "; "))
	}
	return cfg, nil
}

// document returns the mapping at the top of a parsed file.
func document(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return n
}

// segmentRE splits a field path ("loadBalancer.pools[1].addresses[0]")
// into its names and indexes.
var segmentRE = regexp.MustCompile(`[^.\[\]]+|\[\d+\]`)

// lineOf returns the line of the node at a field path, or of the deepest
// node of the path that exists; 0 if none does.
func lineOf(root *yaml.Node, path string) int {
	n := document(root)
	if n == nil {
		return 0
	}
	line := 0
	for _, seg := range segmentRE.FindAllString(path, -1) {
		var next *yaml.Node
		if strings.HasPrefix(seg, "[") {
			i, _ := strconv.Atoi(strings.Trim(seg, "[]"))
			if n.Kind == yaml.SequenceNode && i < len(n.Content) {
				next = n.Content[i]
			}
		} else if n.Kind == yaml.MappingNode {
			for k := 0; k+1 < len(n.Content); k += 2 {
				if n.Content[k].Value == seg {
					next = n.Content[k+1]
					if next.Kind == yaml.MappingNode || next.Kind == yaml.SequenceNode {
						// A collection starts on the line after its key.
						line = n.Content[k].Line
					}
					break
				}
			}
		}
		if next == nil {
			return line
		}
		n = next
		if n.Kind == yaml.ScalarNode {
			line = n.Line
		}
	}
	return line
}

// firstMismatch walks the parsed file beside the Go type it decodes into
// and returns the line of the first key the type lacks or the first value
// of the wrong shape, with what is wrong; 0 when it finds none.
func firstMismatch(root *yaml.Node, t reflect.Type) (int, string) {
	n := document(root)
	if n == nil {
		return 0, ""
	}
	return mismatch(n, t, "")
}

func mismatch(n *yaml.Node, t reflect.Type, path string) (int, string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		return 0, ""
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return n.Line, fmt.Sprintf("%s must be an object", orTop(path))
		}
		fields := jsonFields(t)
		for k := 0; k+1 < len(n.Content); k += 2 {
			key := n.Content[k].Value
			ft, ok := fields[key]
			if !ok {
				return n.Content[k].Line, fmt.Sprintf("unknown field %q", join(path, key))
			}
			if line, what := mismatch(n.Content[k+1], ft, join(path, key)); line > 0 {
				return line, what
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return n.Line, fmt.Sprintf("%s must be a list", orTop(path))
		}
		for i, item := range n.Content {
			if line, what := mismatch(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); line > 0 {
				return line, what
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return n.Line, fmt.Sprintf("%s must be an object", orTop(path))
		}
		for k := 0; k+1 < len(n.Content); k += 2 {
			if line, what := mismatch(n.Content[k+1], t.Elem(), join(path, n.Content[k].Value)); line > 0 {
				return line, what
			}
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return n.Line, fmt.Sprintf("%s must be true or false", path)
		}
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return n.Line, fmt.Sprintf("%s must be an integer", path)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!timestamp") {
			return n.Line, fmt.Sprintf("%s must be a string", path)
		}
	}
	return 0, ""
}

// jsonFields maps the JSON names of t's fields, inline ones flattened, to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k, v := range jsonFields(ft) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}
