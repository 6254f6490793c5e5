package v1alpha1

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// Documents is what a triremeadm configuration file holds: each kind at most once.
type Documents struct {
	Init    *InitConfiguration
	Cluster *ClusterConfiguration
	Join    *JoinConfiguration
}

// Decode reads a multi-document YAML (or JSON) file of this group's kinds. Decoding is
// strict: an unknown field, an unknown kind or apiVersion, or a kind given twice is an
// error. The result is neither defaulted nor validated.
func Decode(data []byte) (*Documents, error) {
	out := &Documents{}
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 0; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		js, err := yaml.ToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(js)) == 0 || bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(js, &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if tm.APIVersion != APIVersion {
			return nil, fmt.Errorf("document %d: apiVersion %q: want %q", n, tm.APIVersion, APIVersion)
		}
		var target any
		switch tm.Kind {
		case KindInitConfiguration:
			if out.Init != nil {
				return nil, fmt.Errorf("document %d: a second %s", n, tm.Kind)
			}
			out.Init = &InitConfiguration{}
			target = out.Init
		case KindClusterConfiguration:
			if out.Cluster != nil {
				return nil, fmt.Errorf("document %d: a second %s", n, tm.Kind)
			}
			out.Cluster = &ClusterConfiguration{}
			target = out.Cluster
		case KindJoinConfiguration:
			if out.Join != nil {
				return nil, fmt.Errorf("document %d: a second %s", n, tm.Kind)
			}
			out.Join = &JoinConfiguration{}
			target = out.Join
		default:
			return nil, fmt.Errorf("document %d: unknown kind %q of %s", n, tm.Kind, APIVersion)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(target); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", n, tm.Kind, err)
		}
	}
	return out, nil
}
