// Package backupoperator is a small operator written with controller-runtime,
// as operators in the wild are, for the e2e suites: it reconciles Backup
// custom resources (backups.ops.e2e.trireme.dev/v1) into a ConfigMap child
// they own, reports progress through the status subresource, and keeps a
// finalizer that records the Backup's clean-up before it goes.
package backupoperator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// GVK is the kind the operator reconciles.
var GVK = schema.GroupVersionKind{Group: "ops.e2e.trireme.dev", Version: "v1", Kind: "Backup"}

// Finalizer holds a Backup until its clean-up is recorded.
const Finalizer = "ops.e2e.trireme.dev/cleanup"

// CRD is the Backup CustomResourceDefinition, for kubectl apply.
const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.ops.e2e.trireme.dev
spec:
  group: ops.e2e.trireme.dev
  scope: Namespaced
  names: {plural: backups, singular: backup, kind: Backup, listKind: BackupList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Target, type: string, jsonPath: .spec.target}
    - {name: Phase, type: string, jsonPath: .status.phase}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [target]
            properties:
              target: {type: string, minLength: 1}
              schedule: {type: string, default: "@daily"}
          status:
            type: object
            properties:
              phase: {type: string}
              observedGeneration: {type: integer, format: int64}
              configMap: {type: string}
`

// ChildName is the name of the ConfigMap a Backup owns.
func ChildName(backup string) string { return backup + "-backup" }

// CleanupName is the name of the ConfigMap the finalizer leaves behind.
func CleanupName(backup string) string { return backup + "-cleaned-up" }

// Reconciler reconciles Backups.
type Reconciler struct {
	client.Client
}

func newBackup() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK)
	return u
}

// Reconcile brings one Backup's children and status up to date. An error
// requeues the request with back-off.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := newBackup()
	if err := r.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if b.GetDeletionTimestamp() != nil {
		if !controllerutil.ContainsFinalizer(b, Finalizer) {
			return ctrl.Result{}, nil
		}
		record := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: CleanupName(b.GetName()), Namespace: b.GetNamespace()},
			Data:       map[string]string{"uid": string(b.GetUID())},
		}
		if err := r.Create(ctx, record); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("record clean-up of %s: %w", req, err)
		}
		controllerutil.RemoveFinalizer(b, Finalizer)
		return ctrl.Result{}, r.Update(ctx, b)
	}
	if controllerutil.AddFinalizer(b, Finalizer) {
		if err := r.Update(ctx, b); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to %s: %w", req, err)
		}
	}

	target, _, _ := unstructured.NestedString(b.Object, "spec", "target")
	schedule, _, _ := unstructured.NestedString(b.Object, "spec", "schedule")
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ChildName(b.GetName()), Namespace: b.GetNamespace()}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, child, func() error {
		child.Data = map[string]string{"target": target, "schedule": schedule}
		return controllerutil.SetControllerReference(b, child, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("child of %s: %w", req, err)
	}

	patch := client.MergeFrom(b.DeepCopy())
	_ = unstructured.SetNestedField(b.Object, "Ready", "status", "phase")
	_ = unstructured.SetNestedField(b.Object, b.GetGeneration(), "status", "observedGeneration")
	_ = unstructured.SetNestedField(b.Object, child.Name, "status", "configMap")
	if err := r.Status().Patch(ctx, b, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("status of %s: %w", req, err)
	}
	return ctrl.Result{}, nil
}

// Run runs the operator against the cluster cfg reaches until ctx ends.
func Run(ctx context.Context, cfg *rest.Config) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("backup").
		For(newBackup()).
		Owns(&corev1.ConfigMap{}).
		Complete(&Reconciler{Client: mgr.GetClient()}); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return mgr.Start(ctx)
}
