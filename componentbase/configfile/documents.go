package configfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Document is one document of a multi-document file (triremeadm's
// --config holds its own kinds beside a KubeletConfiguration), to be
// decoded by whoever knows its kind: Kind.Decode for a kind of a scheme,
// Into for any other.
type Document struct {
	// Index is the document's position in the file, from 0, counting
	// empty ones, for errors a user can find the document by.
	Index int
	// TypeMeta is the apiVersion and kind the document states.
	metav1.TypeMeta
	// Raw is the document as written.
	Raw []byte
}

// Documents splits data, YAML documents separated by "---" lines or JSON,
// into its documents, leaving out empty ones. A document that is not an
// object is an error.
func Documents(data []byte) ([]Document, error) {
	var docs []Document
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 0; ; n++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		js, err := yaml.ToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		d := Document{Index: n, Raw: raw}
		if err := json.Unmarshal(js, &d.TypeMeta); err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		docs = append(docs, d)
	}
}

// Into strictly decodes the document into v, a pointer to a type no
// scheme knows: unknown and duplicate fields are errors.
func (d Document) Into(v any) error {
	return sigsyaml.UnmarshalStrict(d.Raw, v)
}
