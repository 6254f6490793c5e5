package volume

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// clusterTrustBundle returns the PEM a clusterTrustBundle projection
// writes: the named bundle's, or the certificates of every bundle of the
// signer matching the label selector (a nil selector matches none, an
// empty one all), deduplicated and in a stable order, as upstream. Nil
// with no error means nothing was found and the source is optional.
func (m *Manager) clusterTrustBundle(ctx context.Context, p *corev1.ClusterTrustBundleProjection) ([]byte, error) {
	if m.client == nil {
		return nil, fmt.Errorf("no apiserver connection")
	}
	optional := ptr.Deref(p.Optional, false)
	if p.Name != nil {
		b, err := m.client.CertificatesV1().ClusterTrustBundles().Get(ctx, *p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get ClusterTrustBundle %s: %w", *p.Name, err)
		}
		return normalizePEM([]string{b.Spec.TrustBundle}), nil
	}
	if p.SignerName == nil || *p.SignerName == "" {
		return nil, fmt.Errorf("clusterTrustBundle projection names neither a bundle nor a signer")
	}
	var bundles []string
	if p.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("clusterTrustBundle label selector: %w", err)
		}
		list, err := m.client.CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list ClusterTrustBundles: %w", err)
		}
		for _, b := range list.Items {
			if b.Spec.SignerName == *p.SignerName && sel.Matches(labels.Set(b.Labels)) {
				bundles = append(bundles, b.Spec.TrustBundle)
			}
		}
	}
	if len(bundles) == 0 {
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("no ClusterTrustBundle of signer %s matches the selector", *p.SignerName)
	}
	return normalizePEM(bundles), nil
}

// normalizePEM concatenates the certificates of the bundles, each once,
// sorted by their DER so the file changes only when the set does.
func normalizePEM(bundles []string) []byte {
	seen := map[string]bool{}
	var ders [][]byte
	for _, b := range bundles {
		rest := []byte(b)
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type != "CERTIFICATE" || seen[string(block.Bytes)] {
				continue
			}
			seen[string(block.Bytes)] = true
			ders = append(ders, block.Bytes)
		}
	}
	sort.Slice(ders, func(i, j int) bool { return bytes.Compare(ders[i], ders[j]) < 0 })
	var out bytes.Buffer
	for _, d := range ders {
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: d})
	}
	return out.Bytes()
}
