package volume

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"sort"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fieldsel "k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// TrustBundles reads ClusterTrustBundles from a cache (an informer's);
// the manager asks the apiserver when it has none, when the cache has not
// synced, and when the cache misses, so a bundle created just before its
// pod is not taken for absent.
type TrustBundles interface {
	// Get returns the named bundle, or a NotFound error.
	Get(name string) (*certificatesv1.ClusterTrustBundle, error)
	// List returns the bundles the selector matches.
	List(selector labels.Selector) ([]*certificatesv1.ClusterTrustBundle, error)
	// HasSynced reports whether the cache holds every bundle.
	HasSynced() bool
}

// SetTrustBundles sets the cache clusterTrustBundle projections read.
func (m *Manager) SetTrustBundles(b TrustBundles) { m.bundles = b }

// clusterTrustBundle returns the PEM a clusterTrustBundle projection
// writes: the named bundle's, or the certificates of every bundle of the
// signer matching the label selector (a nil selector matches none, an
// empty one all), deduplicated and in a stable order, as upstream. An
// optional source that finds nothing writes an empty file, as upstream.
func (m *Manager) clusterTrustBundle(ctx context.Context, p *corev1.ClusterTrustBundleProjection) ([]byte, error) {
	if m.client == nil {
		return nil, fmt.Errorf("no apiserver connection")
	}
	optional := ptr.Deref(p.Optional, false)
	if p.Name != nil {
		b, err := m.trustBundle(ctx, *p.Name)
		if apierrors.IsNotFound(err) && optional {
			return []byte{}, nil
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
		list, err := m.signerBundles(ctx, *p.SignerName, sel)
		if err != nil {
			return nil, fmt.Errorf("list ClusterTrustBundles: %w", err)
		}
		for _, b := range list {
			bundles = append(bundles, b.Spec.TrustBundle)
		}
	}
	if len(bundles) == 0 {
		if optional {
			return []byte{}, nil
		}
		return nil, fmt.Errorf("combination of signerName and labelSelector matched zero ClusterTrustBundles")
	}
	return normalizePEM(bundles), nil
}

// trustBundle gets the named bundle from the cache, or the apiserver.
func (m *Manager) trustBundle(ctx context.Context, name string) (*certificatesv1.ClusterTrustBundle, error) {
	if m.bundles != nil && m.bundles.HasSynced() {
		if b, err := m.bundles.Get(name); err == nil {
			return b, nil
		}
	}
	return m.client.CertificatesV1().ClusterTrustBundles().Get(ctx, name, metav1.GetOptions{})
}

// signerBundles lists the signer's bundles matching sel from the cache,
// or the apiserver.
func (m *Manager) signerBundles(ctx context.Context, signer string, sel labels.Selector) ([]*certificatesv1.ClusterTrustBundle, error) {
	var out []*certificatesv1.ClusterTrustBundle
	if m.bundles != nil && m.bundles.HasSynced() {
		list, err := m.bundles.List(sel)
		if err != nil {
			return nil, err
		}
		for _, b := range list {
			if b.Spec.SignerName == signer {
				out = append(out, b)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	list, err := m.client.CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{
		LabelSelector: sel.String(),
		FieldSelector: fieldsel.OneTermEqualSelector("spec.signerName", signer).String(),
	})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		// Filtered again: a fake client ignores selectors.
		if b := &list.Items[i]; b.Spec.SignerName == signer && sel.Matches(labels.Set(b.Labels)) {
			out = append(out, b)
		}
	}
	return out, nil
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
