package options

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sigsyaml "sigs.k8s.io/yaml"
)

// KubeletAPIVersion is the apiVersion of the KubeletConfiguration documents a
// configuration file may carry beside triremeadm's own, as kubeadm accepts them.
const KubeletAPIVersion = "kubelet.config.k8s.io/v1beta1"

// SplitComponentConfigs takes the KubeletConfiguration document (at most one) out
// of a multi-document configuration file and returns the remaining documents, for
// v1alpha1.Decode, with it. Decoding is strict: an unknown field is an error.
func SplitComponentConfigs(data []byte) (rest []byte, kubelet *kubeletv1beta1.KubeletConfiguration, err error) {
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out bytes.Buffer
	for n := 0; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", n, err)
		}
		js, err := yaml.ToJSON(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", n, err)
		}
		var tm metav1.TypeMeta
		if t := bytes.TrimSpace(js); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
			if err := json.Unmarshal(js, &tm); err != nil {
				return nil, nil, fmt.Errorf("document %d: %w", n, err)
			}
		}
		if tm.APIVersion != KubeletAPIVersion {
			out.WriteString("---\n")
			out.Write(doc)
			out.WriteString("\n")
			continue
		}
		if tm.Kind != "KubeletConfiguration" {
			return nil, nil, fmt.Errorf("document %d: unknown kind %q of %s", n, tm.Kind, KubeletAPIVersion)
		}
		if kubelet != nil {
			return nil, nil, fmt.Errorf("document %d: a second KubeletConfiguration", n)
		}
		kubelet = &kubeletv1beta1.KubeletConfiguration{}
		if err := sigsyaml.UnmarshalStrict(doc, kubelet); err != nil {
			return nil, nil, fmt.Errorf("document %d (KubeletConfiguration): %w", n, err)
		}
	}
	return out.Bytes(), kubelet, nil
}
