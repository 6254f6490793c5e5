package options

import (
	"fmt"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletconfig "trireme.dev/api/config/kubelet"
	"trireme.dev/api/config/v1alpha1"
	"trireme.dev/componentbase/configfile"
)

// KubeletAPIVersion is the apiVersion of the KubeletConfiguration documents a
// configuration file may carry beside triremeadm's own, as kubeadm accepts them.
const KubeletAPIVersion = "kubelet.config.k8s.io/v1beta1"

// Documents is what a triremeadm configuration file holds: each kind at most once.
type Documents struct {
	Init    *v1alpha1.InitConfiguration
	Cluster *v1alpha1.ClusterConfiguration
	Join    *v1alpha1.JoinConfiguration
	// Kubelet is the node's KubeletConfiguration as the file gives it: the
	// base of the one triremeadm writes for the kubelet.
	Kubelet *kubeletv1beta1.KubeletConfiguration
}

// kubeletKind decodes a KubeletConfiguration document as the kubelet will
// read it, without defaults: triremeadm adds its own choices to the fields
// the user left unset, and the kubelet defaults the rest.
var kubeletKind = configfile.Kind[*kubeletv1beta1.KubeletConfiguration]{Scheme: kubeletconfig.Scheme}

// LoadConfig reads the configuration file at path as DecodeConfig does; its
// errors name the file.
func LoadConfig(path string) (*Documents, error) {
	return configfile.Load(path, DecodeConfig)
}

// DecodeConfig reads a multi-document YAML (or JSON) file of triremeadm's kinds
// and at most one KubeletConfiguration. Decoding is strict: an unknown field, an
// unknown kind or apiVersion, or a kind given twice is an error. The result is
// neither defaulted nor validated.
func DecodeConfig(data []byte) (*Documents, error) {
	docs, err := configfile.Documents(data)
	if err != nil {
		return nil, err
	}
	out := &Documents{}
	for _, d := range docs {
		switch {
		case d.APIVersion == v1alpha1.APIVersion && d.Kind == v1alpha1.KindInitConfiguration:
			err = decodeOnce(d, &out.Init, into[v1alpha1.InitConfiguration])
		case d.APIVersion == v1alpha1.APIVersion && d.Kind == v1alpha1.KindClusterConfiguration:
			err = decodeOnce(d, &out.Cluster, into[v1alpha1.ClusterConfiguration])
		case d.APIVersion == v1alpha1.APIVersion && d.Kind == v1alpha1.KindJoinConfiguration:
			err = decodeOnce(d, &out.Join, into[v1alpha1.JoinConfiguration])
		case d.APIVersion == KubeletAPIVersion && d.Kind == kubeletconfig.Kind:
			err = decodeOnce(d, &out.Kubelet, func(d configfile.Document) (*kubeletv1beta1.KubeletConfiguration, error) {
				return kubeletKind.Decode(d.Raw)
			})
		case d.APIVersion == v1alpha1.APIVersion || d.APIVersion == KubeletAPIVersion:
			err = fmt.Errorf("document %d: unknown kind %q of %s", d.Index, d.Kind, d.APIVersion)
		default:
			err = fmt.Errorf("document %d: apiVersion %q: want %q or %q", d.Index, d.APIVersion, v1alpha1.APIVersion, KubeletAPIVersion)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeOnce decodes d into *slot with decode, refusing a second document of
// the kind.
func decodeOnce[T any](d configfile.Document, slot **T, decode func(configfile.Document) (*T, error)) error {
	if *slot != nil {
		return fmt.Errorf("document %d: a second %s", d.Index, d.Kind)
	}
	v, err := decode(d)
	if err != nil {
		return fmt.Errorf("document %d (%s): %w", d.Index, d.Kind, err)
	}
	*slot = v
	return nil
}

// into decodes a document of one of triremeadm's kinds, which no scheme holds.
func into[T any](d configfile.Document) (*T, error) {
	v := new(T)
	if err := d.Into(v); err != nil {
		return nil, err
	}
	return v, nil
}
