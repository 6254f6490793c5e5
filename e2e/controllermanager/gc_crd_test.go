//go:build e2e_crd

// The apiserver does not serve CustomResourceDefinitions yet (issue 4), so
// this test is built only with -tags e2e_crd; once CRDs are served the tag
// should go and the test join the suite.

package controllermanager_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// TestGCCustomResourceOwner installs a CRD after the collector started and
// deletes a custom resource that owns a ConfigMap: the collector must
// discover the new kind.
func TestGCCustomResourceOwner(t *testing.T) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "gc-crd")
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.gc.e2e.trireme.dev
spec:
  group: gc.e2e.trireme.dev
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
	if res := srv.KubectlStdin(t, crd, "apply", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("apply CRD: %s", res)
	}
	t.Cleanup(func() { srv.Kubectl(t, "delete", "crd", "gadgets.gc.e2e.trireme.dev", "--wait=false") })
	if res := srv.Kubectl(t, "wait", "--for=condition=Established", "crd/gadgets.gc.e2e.trireme.dev", "--timeout=30s"); res.ExitCode != 0 {
		t.Fatalf("wait CRD: %s", res)
	}
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	gvr := schema.GroupVersionResource{Group: "gc.e2e.trireme.dev", Version: "v1", Resource: "gadgets"}
	var obj *unstructured.Unstructured
	eventually(t, gcTimeout, "create gadget", func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gc.e2e.trireme.dev/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g1"},
		}}
		var err error
		obj, err = dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		return err == nil, err
	})
	configMap(t, cs, ns, "part", []metav1.OwnerReference{ownerRef("gc.e2e.trireme.dev/v1", "Gadget", "g1", string(obj.GetUID()), true)})
	// A live custom owner keeps its dependent.
	time.Sleep(3 * time.Second)
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "part", metav1.GetOptions{}); err != nil {
		t.Fatalf("dependent of a live custom resource collected: %v", err)
	}
	fg := metav1.DeletePropagationForeground
	if err := dyn.Resource(gvr).Namespace(ns).Delete(context.Background(), "g1", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatalf("delete gadget: %v", err)
	}
	eventually(t, 45*time.Second, "dependent of the custom resource collected", configMapGone(cs, ns, "part"))
	eventually(t, 45*time.Second, "custom resource gone", func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "g1", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
