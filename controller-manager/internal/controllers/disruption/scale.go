package disruption

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/scale"
)

// ScaleReader reads the scale of a pod's controller of any kind.
type ScaleReader interface {
	// Scale returns the UID of the object ref names and its desired
	// replicas, from its scale subresource.
	Scale(ctx context.Context, namespace string, ref *metav1.OwnerReference) (uid string, replicas int32, err error)
}

// ScaleClient is a ScaleReader on client-go's scale client, resolving
// kinds through Mapper and telling, through Discovery, a missing object
// from a kind without the scale subresource.
type ScaleClient struct {
	Scales    scale.ScalesGetter
	Mapper    meta.RESTMapper
	Discovery discovery.DiscoveryInterface
}

// Scale implements ScaleReader.
func (s ScaleClient) Scale(ctx context.Context, namespace string, ref *metav1.OwnerReference) (string, int32, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return "", 0, fmt.Errorf("owner apiVersion %q: %w", ref.APIVersion, err)
	}
	mapping, err := s.Mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		if rm, ok := s.Mapper.(interface{ Reset() }); ok && meta.IsNoMatchError(err) {
			rm.Reset()
		}
		return "", 0, err
	}
	gr := mapping.Resource.GroupResource()
	sc, err := s.Scales.Scales(namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Not found is also what a resource without a scale subresource
		// answers: say which, as upstream does.
		if ok, derr := s.hasScale(mapping.Resource); derr == nil && !ok {
			return "", 0, fmt.Errorf("%s does not implement the scale subresource", gr)
		}
	}
	if err != nil {
		return "", 0, err
	}
	return string(sc.UID), sc.Spec.Replicas, nil
}

func (s ScaleClient) hasScale(gvr schema.GroupVersionResource) (bool, error) {
	list, err := s.Discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource+"/scale" {
			return true, nil
		}
	}
	return false, nil
}
