package storageversionmigrator

import (
	"context"
	"slices"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

// resettable is a fixed mapper.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// fixture is a controller over fake clients: Deployments web-1 (written at
// resourceVersion 10), web-2 (20, after the migration began at 15) and
// gone (12, deleted before its rewrite).
type fixture struct {
	c       *Controller
	client  *fake.Clientset
	patched []string
}

func newFixture(t *testing.T, svm *svmv1.StorageVersionMigration, now time.Time) *fixture {
	t.Helper()
	client := fake.NewClientset(svm)
	f := informers.NewSharedInformerFactory(client, 0)
	svms := f.Storagemigration().V1().StorageVersionMigrations()
	if err := svms.Informer().GetIndexer().Add(svm); err != nil {
		t.Fatal(err)
	}
	md := metafake.NewSimpleMetadataClient(runtime.NewScheme())
	fx := &fixture{client: client}
	md.PrependReactor("list", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		// The fake client wants a metav1.List of PartialObjectMetadata.
		item := func(name, rv string) runtime.RawExtension {
			return runtime.RawExtension{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, ResourceVersion: rv}}}
		}
		return true, &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "15"},
			Items: []runtime.RawExtension{item("web-1", "10"), item("web-2", "20"), item("gone", "12")}}, nil
	})
	md.PrependReactor("patch", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		name := a.(clienttesting.PatchAction).GetName()
		if name == "gone" {
			return true, nil, newNotFound(name)
		}
		fx.patched = append(fx.patched, name+" "+string(a.(clienttesting.PatchAction).GetPatch()))
		return true, &metav1.PartialObjectMetadata{}, nil
	})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	c, err := New(Options{Client: client, Metadata: md, Mapper: resettable{mapper}, Migrations: svms,
		Recorder: record.NewFakeRecorder(10), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	fx.c = c
	return fx
}

func (fx *fixture) stored(t *testing.T, name string) *svmv1.StorageVersionMigration {
	t.Helper()
	svm, err := fx.client.StoragemigrationV1().StorageVersionMigrations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svm
}

func newNotFound(name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, name)
}

func migration(resource schema.GroupResource, created time.Time) *svmv1.StorageVersionMigration {
	return &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m", CreationTimestamp: metav1.NewTime(created)},
		Spec:       svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: resource.Group, Resource: resource.Resource}},
	}
}

func TestMigration(t *testing.T) {
	now := time.Unix(1700000000, 0)
	svm := migration(schema.GroupResource{Group: "apps", Resource: "deployments"}, now)
	fx := newFixture(t, svm, now)
	ctx := context.Background()

	// First the point the migration covers, and Running.
	if err := fx.c.sync(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	got := fx.stored(t, "m")
	if got.Status.ResourceVersion != "15" || !meta.IsStatusConditionTrue(got.Status.Conditions, string(svmv1.MigrationRunning)) {
		t.Fatalf("after the first sync: %+v", got.Status)
	}
	if len(fx.patched) != 0 {
		t.Fatalf("patched before the start point was recorded: %v", fx.patched)
	}

	// Then the rewrite of what was written before it.
	indexer := fx.c.o.Migrations.Informer().GetIndexer()
	if err := indexer.Update(got); err != nil {
		t.Fatal(err)
	}
	if err := fx.c.sync(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if want := []string{`web-1 {"metadata":{"resourceVersion":"10"}}`}; !slices.Equal(fx.patched, want) {
		t.Errorf("patched %v, want %v (web-2 is newer than the start, gone was deleted)", fx.patched, want)
	}
	got = fx.stored(t, "m")
	if !meta.IsStatusConditionTrue(got.Status.Conditions, string(svmv1.MigrationSucceeded)) || meta.IsStatusConditionTrue(got.Status.Conditions, string(svmv1.MigrationRunning)) {
		t.Errorf("after the rewrite: %+v", got.Status.Conditions)
	}
}

func TestUnknownResource(t *testing.T) {
	now := time.Unix(1700000000, 0)
	ctx := context.Background()

	fresh := newFixture(t, migration(schema.GroupResource{Group: "example.com", Resource: "widgets"}, now.Add(-10*time.Second)), now)
	if err := fresh.c.sync(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if c := fresh.stored(t, "m").Status.Conditions; len(c) != 0 {
		t.Errorf("a resource just made failed at once: %+v", c)
	}

	old := newFixture(t, migration(schema.GroupResource{Group: "example.com", Resource: "widgets"}, now.Add(-2*time.Minute)), now)
	if err := old.c.sync(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(old.stored(t, "m").Status.Conditions, string(svmv1.MigrationFailed)); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "ResourceNotFound" {
		t.Errorf("failed condition = %+v", c)
	}
}
