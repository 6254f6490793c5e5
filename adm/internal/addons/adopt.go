package addons

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
)

// Helm's ownership metadata: an object that lacks it is refused by an install
// or upgrade of the release that renders it ("invalid ownership metadata").
const (
	managedByLabel        = "app.kubernetes.io/managed-by"
	releaseNameAnnotation = "meta.helm.sh/release-name"
	releaseNSAnnotation   = "meta.helm.sh/release-namespace"
)

// legacyObject is one object an earlier triremeadm created for an addon.
type legacyObject struct {
	resource        schema.GroupVersionResource
	namespace, name string
}

// legacy are the CoreDNS objects triremeadm created before the chart existed
// (the names kubeadm gives them), which the chart's coredns subchart renders.
var legacy = []legacyObject{
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, Namespace, "coredns"},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace, "coredns"},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, Namespace, "kube-dns"},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace, "coredns"},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "", "system:coredns"},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, "", "system:coredns"},
}

// Adopt gives the addon objects an earlier triremeadm created Helm's ownership
// metadata, so that the release's first install or upgrade takes them over in
// place: the Deployment is updated, not deleted and created again, and the
// kube-dns Service keeps its address, so DNS never stops answering. Objects
// that are missing or already owned by the release are left alone. It returns
// the objects it adopted, as "resource/namespace/name".
func Adopt(ctx context.Context, c metadata.Interface) ([]string, error) {
	var adopted []string
	for _, o := range legacy {
		var ri metadata.ResourceInterface = c.Resource(o.resource)
		if o.namespace != "" {
			ri = c.Resource(o.resource).Namespace(o.namespace)
		}
		m, err := ri.Get(ctx, o.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return adopted, fmt.Errorf("get %s %s: %w", o.resource.Resource, o.name, err)
		}
		if m.Annotations[releaseNameAnnotation] == ReleaseName && m.Annotations[releaseNSAnnotation] == Namespace && m.Labels[managedByLabel] == "Helm" {
			continue
		}
		patch, err := adoptionPatch(m.ManagedFields)
		if err != nil {
			return adopted, err
		}
		if _, err := ri.Patch(ctx, o.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return adopted, fmt.Errorf("adopt %s %s into release %s: %w", o.resource.Resource, o.name, ReleaseName, err)
		}
		adopted = append(adopted, o.resource.Resource+"/"+o.namespace+"/"+o.name)
	}
	return adopted, nil
}

// legacyManager is the field manager an earlier triremeadm applied the
// objects with.
const legacyManager = "triremeadm"

// adoptionPatch gives an object Helm's ownership metadata and drops the
// earlier triremeadm's claim on its fields: left in place, that claim made
// a user's later `helm upgrade --set` of one of them fail with a conflict
// with "triremeadm". An object left with no manager gets managedFields
// [{}], which is how the API strips them all.
func adoptionPatch(fields []metav1.ManagedFieldsEntry) ([]byte, error) {
	kept := []metav1.ManagedFieldsEntry{}
	for _, f := range fields {
		if f.Manager != legacyManager {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		kept = append(kept, metav1.ManagedFieldsEntry{})
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":        map[string]string{managedByLabel: "Helm"},
		"annotations":   map[string]string{releaseNameAnnotation: ReleaseName, releaseNSAnnotation: Namespace},
		"managedFields": kept,
	}})
}
