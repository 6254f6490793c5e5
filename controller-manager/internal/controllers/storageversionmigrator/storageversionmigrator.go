// Package storageversionmigrator is the controller that carries out
// StorageVersionMigrations: it rewrites every object of a resource that
// was stored before the migration began, so that each is stored again in
// the server's current storage version and encryption. The rewrite is an
// empty patch guarded by the object's resourceVersion; the API server
// writes it to etcd only when the stored bytes would change, so objects
// already current cost a read.
package storageversionmigrator

import (
	"context"
	"fmt"
	"strconv"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	svminformers "k8s.io/client-go/informers/storagemigration/v1"
	"k8s.io/client-go/kubernetes"
	svmlisters "k8s.io/client-go/listers/storagemigration/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers, upstream's.
const Name = "storage-version-migrator-controller"

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes the migrations' status.
	Client kubernetes.Interface
	// Metadata lists and patches the objects migrated.
	Metadata metadata.Interface
	// Mapper finds the version a resource is served at.
	Mapper meta.ResettableRESTMapper
	// Migrations is the shared StorageVersionMigration informer.
	Migrations svminformers.StorageVersionMigrationInformer
	// Recorder emits the migrations' Events.
	Recorder record.EventRecorder
	// PageSize is how many objects one list call returns; 0 means 500.
	PageSize int64
	// UnknownGrace is how long a migration of a resource discovery does
	// not know is retried before it fails (a CRD just made); 0 means a
	// minute, as upstream.
	UnknownGrace time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the storage version migrator.
type Controller struct {
	o      Options
	svms   svmlisters.StorageVersionMigrationLister
	loop   *worker.Loop
	synced []cache.InformerSynced
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.PageSize == 0 {
		o.PageSize = 500
	}
	if o.UnknownGrace == 0 {
		o.UnknownGrace = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{o: o, svms: o.Migrations.Lister(), synced: []cache.InformerSynced{o.Migrations.Informer().HasSynced}}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Migrations.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch storage version migrations: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	_, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.svms.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get migration %s: %w", name, err)
	}
	svm := cached.DeepCopy()
	if finished(svm) {
		return nil
	}
	gvr, err := c.o.Mapper.ResourceFor(schema.GroupVersionResource{Group: svm.Spec.Resource.Group, Resource: svm.Spec.Resource.Resource})
	if err != nil {
		// A CRD made a moment ago may not be discovered yet.
		if c.o.Now().Sub(svm.CreationTimestamp.Time) < c.o.UnknownGrace {
			c.o.Mapper.Reset()
			c.loop.AddAfter(key, 5*time.Second)
			return nil
		}
		return c.finish(ctx, svm, svmv1.MigrationFailed, "ResourceNotFound", fmt.Sprintf("the server serves no resource %s", svm.Spec.Resource.String()))
	}
	res := c.o.Metadata.Resource(gvr)
	if svm.Status.ResourceVersion == "" {
		// The point the migration covers: every object written before it.
		list, err := res.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return fmt.Errorf("list %s for migration %s: %w", gvr, name, err)
		}
		svm.Status.ResourceVersion = list.ResourceVersion
		setCondition(svm, svmv1.MigrationRunning, metav1.ConditionTrue, "Started", "migrating objects written before resourceVersion "+list.ResourceVersion, c.o.Now())
		_, err = c.o.Client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{})
		return err // the update queues the next step
	}
	migrated, err := c.migrate(ctx, res, svm.Status.ResourceVersion)
	if err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsBadRequest(err) {
			return c.finish(ctx, svm, svmv1.MigrationFailed, "MigrationFailed", err.Error())
		}
		return err
	}
	c.o.Recorder.Eventf(svm, "Normal", "Migrated", "Rewrote %d %s in the current storage version", migrated, gvr.GroupResource())
	return c.finish(ctx, svm, svmv1.MigrationSucceeded, "Migrated", fmt.Sprintf("%d objects written before resourceVersion %s rewritten", migrated, svm.Status.ResourceVersion))
}

// migrate rewrites the objects of res last written at or before rv, page
// by page, and returns how many it patched. An object changed or deleted
// since is already current and is skipped.
func (c *Controller) migrate(ctx context.Context, res metadata.Getter, rv string) (int, error) {
	limit, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("migration resourceVersion %q: %w", rv, err)
	}
	migrated := 0
	opts := metav1.ListOptions{Limit: c.o.PageSize}
	for {
		page, err := res.List(ctx, opts)
		if err != nil {
			return migrated, fmt.Errorf("list: %w", err)
		}
		for i := range page.Items {
			obj := &page.Items[i]
			if v, err := strconv.ParseUint(obj.ResourceVersion, 10, 64); err != nil || v > limit {
				continue
			}
			// The resourceVersion is a precondition: a conflict means the
			// object was written since, in the current version.
			patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q}}`, obj.ResourceVersion)
			_, err := res.Namespace(obj.Namespace).Patch(ctx, obj.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: Name})
			switch {
			case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			case err != nil:
				return migrated, fmt.Errorf("rewrite %s/%s: %w", obj.Namespace, obj.Name, err)
			default:
				migrated++
			}
		}
		if page.Continue == "" {
			return migrated, nil
		}
		opts.Continue = page.Continue
	}
}

// finish records the migration's outcome; Running ends with it.
func (c *Controller) finish(ctx context.Context, svm *svmv1.StorageVersionMigration, outcome svmv1.MigrationConditionType, reason, message string) error {
	now := c.o.Now()
	setCondition(svm, svmv1.MigrationRunning, metav1.ConditionFalse, reason, message, now)
	setCondition(svm, outcome, metav1.ConditionTrue, reason, message, now)
	if outcome == svmv1.MigrationFailed {
		c.o.Recorder.Event(svm, "Warning", reason, message)
	}
	if _, err := c.o.Client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("record outcome of migration %s: %w", svm.Name, err)
	}
	return nil
}

func finished(svm *svmv1.StorageVersionMigration) bool {
	return meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationSucceeded)) ||
		meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationFailed))
}

func setCondition(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType, status metav1.ConditionStatus, reason, message string, now time.Time) {
	meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type: string(t), Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now),
	})
}
