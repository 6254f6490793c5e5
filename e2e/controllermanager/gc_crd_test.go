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

	"trireme.dev/componentbase/testwait"
)

// gadgets is the custom resource the tests below install.
var gadgets = schema.GroupVersionResource{Group: "gc.e2e.trireme.dev", Version: "v1", Resource: "gadgets"}

// TestCustomResources installs a CRD after the controller-manager started:
// the garbage collector and the namespace controller must discover the new
// kind and treat its objects as they treat built-in ones.
func TestCustomResources(t *testing.T) {
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
	cfg := srv.Config()
	dyn := dynamic.NewForConfigOrDie(cfg)

	t.Run("foreground", func(t *testing.T) {
		testGCCustomOwner(t, dyn, metav1.DeletePropagationForeground)
	})
	t.Run("background", func(t *testing.T) {
		testGCCustomOwner(t, dyn, metav1.DeletePropagationBackground)
	})
	t.Run("namespace deletion", func(t *testing.T) {
		testNamespaceDeletesCustomResources(t, dyn)
	})
}

// createGadget creates a Gadget, retrying while the new kind is still being
// served.
func createGadget(t *testing.T, dyn dynamic.Interface, ns, name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	var obj *unstructured.Unstructured
	testwait.For(t, gcTimeout, "create gadget "+name, func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gc.e2e.trireme.dev/v1", "kind": "Gadget", "metadata": map[string]any{"name": name},
		}}
		u.SetOwnerReferences(owners)
		var err error
		obj, err = dyn.Resource(gadgets).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		return err == nil, err
	})
	return obj
}

func gadgetGone(dyn dynamic.Interface, ns, name string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gadgets).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}
}

// testGCCustomOwner deletes a Gadget that owns a ConfigMap and another
// Gadget with the given propagation: both dependents must be collected.
func testGCCustomOwner(t *testing.T, dyn dynamic.Interface, propagation metav1.DeletionPropagation) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "gc-crd")
	owner := createGadget(t, dyn, ns, "owner")
	ref := ownerRef("gc.e2e.trireme.dev/v1", "Gadget", "owner", string(owner.GetUID()), true)
	configMap(t, cs, ns, "part", []metav1.OwnerReference{ref})
	createGadget(t, dyn, ns, "child", ref)
	// A live custom owner keeps its dependents.
	time.Sleep(2 * time.Second)
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "part", metav1.GetOptions{}); err != nil {
		t.Fatalf("dependent of a live custom resource collected: %v", err)
	}
	if _, err := dyn.Resource(gadgets).Namespace(ns).Get(context.Background(), "child", metav1.GetOptions{}); err != nil {
		t.Fatalf("custom dependent of a live custom resource collected: %v", err)
	}
	if err := dyn.Resource(gadgets).Namespace(ns).Delete(context.Background(), "owner", metav1.DeleteOptions{PropagationPolicy: &propagation}); err != nil {
		t.Fatalf("delete gadget: %v", err)
	}
	testwait.For(t, gcTimeout, "ConfigMap dependent of the custom resource collected", configMapGone(cs, ns, "part"))
	testwait.For(t, gcTimeout, "custom dependent of the custom resource collected", gadgetGone(dyn, ns, "child"))
	testwait.For(t, gcTimeout, "custom owner gone", gadgetGone(dyn, ns, "owner"))
}

// testNamespaceDeletesCustomResources deletes a namespace holding Gadgets
// (one with a finalizer the test removes, as its operator would): the
// namespace controller must delete them before the namespace goes.
func testNamespaceDeletesCustomResources(t *testing.T, dyn dynamic.Interface) {
	cs := srv.Clientset(t)
	ns := clusterNamespace(t, cs, "ns-crd")
	for _, name := range []string{"a", "b", "c"} {
		createGadget(t, dyn, ns, name)
	}
	if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	for _, name := range []string{"a", "b", "c"} {
		testwait.For(t, gcTimeout, "gadget "+name+" deleted with its namespace", gadgetGone(dyn, ns, name))
	}
	testwait.For(t, gcTimeout, "namespace gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
