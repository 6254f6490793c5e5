package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

const (
	// protobufType is the Kubernetes protobuf media type.
	protobufType = "application/vnd.kubernetes.protobuf"
	// tableAccept asks for the server-side table kubectl get prints.
	tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	// holdFinalizer is a finalizer no controller removes.
	holdFinalizer = "integration.trireme.dev/hold"
)

// background deletes as kubectl does by default: dependents are left to the
// garbage collector, so no kind (not even batch/v1 Jobs, which default to
// orphaning) waits on a finalizer.
var background = metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// testLifecycle walks one object through every verb, watching it from
// before its creation to its deletion.
func (r *resourceRun) testLifecycle(t *testing.T) {
	ctx := testContext(t)
	name := r.rc.newName()
	byName := "metadata.name=" + name

	list, err := r.api.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatalf("list before create: %v", err)
	}
	w, err := r.api.Watch(ctx, metav1.ListOptions{FieldSelector: byName, ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	rec := record(w)
	defer w.Stop()

	var created *unstructured.Unstructured
	if !t.Run("create", func(t *testing.T) {
		created, err = r.api.Create(ctx, r.object(t, name, map[string]string{"case": name}), metav1.CreateOptions{FieldManager: "integration"})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.GetName() != name || created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetCreationTimestamp().Time.IsZero() {
			t.Errorf("created object lacks server-set metadata: name=%q uid=%q rv=%q created=%v",
				created.GetName(), created.GetUID(), created.GetResourceVersion(), created.GetCreationTimestamp())
		}
		if r.served.namespaced && created.GetNamespace() != r.ns {
			t.Errorf("namespace = %q, want %q", created.GetNamespace(), r.ns)
		}
		if r.rc.serverStatus {
			created = r.waitForServerStatus(t, ctx, name)
		}
	}) {
		return
	}

	t.Run("get", func(t *testing.T) {
		got, err := r.api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetUID() != created.GetUID() || got.GetResourceVersion() != created.GetResourceVersion() {
			t.Errorf("get uid/rv = %s/%s, want %s/%s", got.GetUID(), got.GetResourceVersion(), created.GetUID(), created.GetResourceVersion())
		}
	})

	t.Run("label selectors", func(t *testing.T) {
		for _, tc := range []struct {
			selector string
			want     bool
		}{
			{"case=" + name, true},
			{"case in (" + name + ", other)", true},
			{"case", true},
			{"case=" + name + ",absent=x", false},
			{"case!=" + name, false},
			{"!case", false},
		} {
			r.wantListed(t, ctx, metav1.ListOptions{LabelSelector: tc.selector}, name, tc.want)
		}
	})

	t.Run("field selectors", func(t *testing.T) {
		r.wantListed(t, ctx, metav1.ListOptions{FieldSelector: byName}, name, true)
		r.wantListed(t, ctx, metav1.ListOptions{FieldSelector: "metadata.name!=" + name}, name, false)
		if !r.served.namespaced {
			return
		}
		r.wantListed(t, ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + r.ns + "," + byName}, name, true)
		all, err := dyn.Resource(r.rc.gvr).List(ctx, metav1.ListOptions{FieldSelector: byName})
		if err != nil {
			t.Fatalf("list in all namespaces: %v", err)
		}
		if len(all.Items) != 1 || all.Items[0].GetNamespace() != r.ns {
			t.Errorf("list in all namespaces by name found %d objects, want 1 in %s", len(all.Items), r.ns)
		}
	})

	t.Run("table", func(t *testing.T) {
		raw, err := client.CoreV1().RESTClient().Get().AbsPath(r.path(name)).SetHeader("Accept", tableAccept).DoRaw(ctx)
		if err != nil {
			t.Fatalf("get as table: %v: %s", err, raw)
		}
		var table metav1.Table
		if err := json.Unmarshal(raw, &table); err != nil {
			t.Fatalf("decode table: %v", err)
		}
		// Most kinds print Name first; events print it last, as upstream does.
		nameCol := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Name == "Name" })
		if nameCol < 0 {
			t.Fatalf("table columns %v have no Name", table.ColumnDefinitions)
		}
		// Cells may outnumber columns (upstream's IPAddress rows carry an
		// age with no column), never the reverse.
		if len(table.Rows) != 1 || len(table.Rows[0].Cells) < len(table.ColumnDefinitions) || table.Rows[0].Cells[nameCol] != name {
			t.Errorf("table rows = %v, want one row for %s with a cell per column", table.Rows, name)
		}
	})

	t.Run("table list", func(t *testing.T) {
		collection := path.Dir(r.path(name))
		raw, err := client.CoreV1().RESTClient().Get().AbsPath(collection).Param("fieldSelector", byName).SetHeader("Accept", tableAccept).DoRaw(ctx)
		if err != nil {
			t.Fatalf("list as table: %v: %s", err, raw)
		}
		var table metav1.Table
		if err := json.Unmarshal(raw, &table); err != nil {
			t.Fatalf("decode table: %v", err)
		}
		if len(table.Rows) != 1 || table.ResourceVersion == "" {
			t.Errorf("table list has %d rows at resourceVersion %q, want 1 row and a version", len(table.Rows), table.ResourceVersion)
		}
	})

	t.Run("metadata only", func(t *testing.T) {
		// The garbage collector and namespace controller read metadata only.
		api := metadataClient.Resource(r.rc.gvr)
		var m interface {
			Get(context.Context, string, metav1.GetOptions, ...string) (*metav1.PartialObjectMetadata, error)
			List(context.Context, metav1.ListOptions) (*metav1.PartialObjectMetadataList, error)
		} = api
		if r.served.namespaced {
			m = api.Namespace(r.ns)
		}
		got, err := m.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get metadata: %v", err)
		}
		if got.UID != created.GetUID() || got.Labels["case"] != name {
			t.Errorf("metadata = %+v, want the object's uid and labels", got.ObjectMeta)
		}
		list, err := m.List(ctx, metav1.ListOptions{FieldSelector: byName})
		if err != nil {
			t.Fatalf("list metadata: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].UID != created.GetUID() {
			t.Errorf("metadata list has %d items, want the object", len(list.Items))
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		obj, ct, err := r.getProtobuf(ctx, name)
		if err != nil {
			t.Fatalf("get in protobuf: %v", err)
		}
		if ct != protobufType {
			t.Errorf("content type = %q, want %q", ct, protobufType)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatalf("decoded %T: %v", obj, err)
		}
		if m.GetUID() != created.GetUID() {
			t.Errorf("protobuf uid = %s, want %s", m.GetUID(), created.GetUID())
		}
	})

	t.Run("update", func(t *testing.T) {
		got, err := r.api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		labels := got.GetLabels()
		labels["updated"] = "yes"
		got.SetLabels(labels)
		updated, err := r.api.Update(ctx, got, metav1.UpdateOptions{FieldManager: "integration"})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if updated.GetLabels()["updated"] != "yes" || updated.GetResourceVersion() == got.GetResourceVersion() {
			t.Errorf("update: labels %v rv %s (was %s), want label updated=yes and a new rv", updated.GetLabels(), updated.GetResourceVersion(), got.GetResourceVersion())
		}
		// The stale object's resourceVersion is a precondition that now fails.
		got.SetLabels(map[string]string{"case": name, "stale": "yes"})
		_, err = r.api.Update(ctx, got, metav1.UpdateOptions{})
		wantStatus(t, err, 409)
	})

	for _, p := range []struct {
		name, annotation string
		pt               types.PatchType
		body             string
	}{
		{"json patch", "json-patch", types.JSONPatchType, `[{"op":"add","path":"/metadata/annotations","value":{"json-patch":"yes"}}]`},
		{"merge patch", "merge-patch", types.MergePatchType, `{"metadata":{"annotations":{"merge-patch":"yes"}}}`},
		{"strategic merge patch", "strategic-merge-patch", types.StrategicMergePatchType, `{"metadata":{"annotations":{"strategic-merge-patch":"yes"}}}`},
	} {
		t.Run(p.name, func(t *testing.T) {
			patched, err := r.api.Patch(ctx, name, p.pt, []byte(p.body), metav1.PatchOptions{FieldManager: "integration"})
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			if patched.GetAnnotations()[p.annotation] != "yes" {
				t.Errorf("annotations after %s = %v, want %s=yes", p.name, patched.GetAnnotations(), p.annotation)
			}
			if patched.GetLabels()["updated"] != "yes" {
				t.Errorf("%s lost the label set by update: %v", p.name, patched.GetLabels())
			}
		})
	}

	t.Run("server-side apply", func(t *testing.T) { r.testApply(t, ctx, name) })

	t.Run("dry-run update", func(t *testing.T) {
		got, err := r.api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		labels := got.GetLabels()
		labels["dry-run"] = "yes"
		got.SetLabels(labels)
		out, err := r.api.Update(ctx, got, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("dry-run update: %v", err)
		}
		if out.GetLabels()["dry-run"] != "yes" {
			t.Errorf("dry-run update answered labels %v, want dry-run=yes", out.GetLabels())
		}
		after, err := r.api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := after.GetLabels()["dry-run"]; ok || after.GetResourceVersion() != got.GetResourceVersion() {
			t.Errorf("dry-run update was stored: labels %v, rv %s (was %s)", after.GetLabels(), after.GetResourceVersion(), got.GetResourceVersion())
		}
	})

	t.Run("dry-run delete", func(t *testing.T) {
		if err := r.api.Delete(ctx, name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry-run delete: %v", err)
		}
		after, err := r.api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("object gone after a dry-run delete: %v", err)
		}
		if after.GetDeletionTimestamp() != nil {
			t.Errorf("dry-run delete set deletionTimestamp %v", after.GetDeletionTimestamp())
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := r.api.Delete(ctx, name, background); err != nil {
			t.Fatalf("delete: %v", err)
		}
		r.wantGone(t, ctx, name)
	})

	t.Run("watch", func(t *testing.T) {
		events := rec.waitFor(t, func(evs []watch.Event) bool {
			return len(evs) > 0 && evs[len(evs)-1].Type == watch.Deleted
		})
		types := eventTypes(events)
		if len(events) < 3 || events[0].Type != watch.Added || slices.Index(types, watch.Modified) < 0 {
			t.Fatalf("watch saw %v, want ADDED, MODIFIED..., DELETED", types)
		}
		if u, ok := events[0].Object.(*unstructured.Unstructured); !ok || u.GetUID() != created.GetUID() {
			t.Errorf("ADDED event carries %v, want the created object", events[0].Object)
		}
	})
}

// wantListed lists with opts and checks whether name is among the results.
func (r *resourceRun) wantListed(t *testing.T, ctx context.Context, opts metav1.ListOptions, name string, want bool) {
	t.Helper()
	list, err := r.api.List(ctx, opts)
	if err != nil {
		t.Fatalf("list %+v: %v", opts, err)
	}
	found := false
	for _, item := range list.Items {
		found = found || item.GetName() == name
	}
	if found != want {
		t.Errorf("list with label selector %q field selector %q: listed %s = %v, want %v", opts.LabelSelector, opts.FieldSelector, name, found, want)
	}
}

// testApply applies labels as two field managers: the second conflicts
// with the first until it forces.
func (r *resourceRun) testApply(t *testing.T, ctx context.Context, name string) {
	apply := func(manager, value string, force bool) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(r.rc.gvr.GroupVersion().String())
		u.SetKind(r.served.kind)
		u.SetName(name)
		if r.served.namespaced {
			u.SetNamespace(r.ns)
		}
		u.SetLabels(map[string]string{"applied": value})
		return r.api.Apply(ctx, name, u, metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	out, err := apply("manager-a", "by-a", false)
	if err != nil {
		t.Fatalf("apply as manager-a: %v", err)
	}
	if out.GetLabels()["applied"] != "by-a" || out.GetLabels()["case"] != name {
		t.Errorf("labels after apply = %v, want applied=by-a and the earlier labels kept", out.GetLabels())
	}
	if !managedBy(out, "manager-a", metav1.ManagedFieldsOperationApply) {
		t.Errorf("managedFields %v lack an Apply entry for manager-a", out.GetManagedFields())
	}
	_, err = apply("manager-b", "by-b", false)
	se := wantStatus(t, err, 409)
	wantCause(t, se, ".metadata.labels.applied")
	out, err = apply("manager-b", "by-b", true)
	if err != nil {
		t.Fatalf("forced apply as manager-b: %v", err)
	}
	if out.GetLabels()["applied"] != "by-b" {
		t.Errorf("labels after forced apply = %v, want applied=by-b", out.GetLabels())
	}
}

func managedBy(u *unstructured.Unstructured, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, mf := range u.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == op {
			return true
		}
	}
	return false
}

// testDryRunCreate creates with dryRun=All: the answer is the object, and
// nothing is stored.
func (r *resourceRun) testDryRunCreate(t *testing.T) {
	ctx := testContext(t)
	name := r.rc.newName()
	out, err := r.api.Create(ctx, r.object(t, name, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if out.GetName() != name {
		t.Errorf("dry-run create answered name %q, want %q", out.GetName(), name)
	}
	_, err = r.api.Get(ctx, name, metav1.GetOptions{})
	wantStatus(t, err, 404)
}

// testApplyCreate creates an object by server-side apply, as
// `kubectl apply --server-side` does for a new manifest.
func (r *resourceRun) testApplyCreate(t *testing.T) {
	ctx := testContext(t)
	name := r.rc.newName()
	obj := r.object(t, name, map[string]string{"applied": "yes"})
	out, err := r.api.Apply(ctx, name, obj, metav1.ApplyOptions{FieldManager: "applier"})
	if err != nil {
		t.Fatalf("apply a new object: %v", err)
	}
	if out.GetUID() == "" || out.GetLabels()["applied"] != "yes" || !managedBy(out, "applier", metav1.ManagedFieldsOperationApply) {
		t.Errorf("applied object: uid %q labels %v managedFields %v, want created and owned by applier", out.GetUID(), out.GetLabels(), out.GetManagedFields())
	}
	// Applying the same configuration again changes nothing. Controllers in
	// the server (API Priority and Fairness writes flow schema status) may
	// write meanwhile, so a moved version is retried before it counts.
	noop := false
	for try := 0; try < 3 && !noop; try++ {
		before, err := r.api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		again, err := r.api.Apply(ctx, name, obj, metav1.ApplyOptions{FieldManager: "applier"})
		if err != nil {
			t.Fatalf("apply again: %v", err)
		}
		noop = again.GetResourceVersion() == before.GetResourceVersion()
	}
	if !noop {
		t.Errorf("applying an unchanged configuration writes a new resourceVersion every time")
	}
	if err := r.api.Delete(ctx, name, background); err != nil {
		t.Fatalf("delete: %v", err)
	}
	r.wantGone(t, ctx, name)
}

// testPagination lists five objects two at a time, then deletes them as a
// collection where the resource allows it.
func (r *resourceRun) testPagination(t *testing.T) {
	ctx := testContext(t)
	page := r.rc.newName()
	labels := map[string]string{"page": page}
	var want []string
	for i := 0; i < 5; i++ {
		name := r.rc.newName()
		if _, err := r.api.Create(ctx, r.object(t, name, labels), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		want = append(want, name)
	}
	var got []string
	opts := metav1.ListOptions{LabelSelector: "page=" + page, Limit: 2}
	for pages := 1; ; pages++ {
		list, err := r.api.List(ctx, opts)
		if err != nil {
			t.Fatalf("list page %d: %v", pages, err)
		}
		if len(list.Items) > 2 {
			t.Fatalf("page %d has %d items, limit was 2", pages, len(list.Items))
		}
		for _, item := range list.Items {
			got = append(got, item.GetName())
		}
		if list.GetContinue() == "" {
			break
		}
		if pages > 5 {
			t.Fatalf("more than 5 pages for 5 objects")
		}
		opts.Continue = list.GetContinue()
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("paged list = %v, want %v", got, want)
	}

	if !r.served.verbs["deletecollection"] {
		for _, name := range want {
			if err := r.api.Delete(ctx, name, background); err != nil {
				t.Fatalf("delete %s: %v", name, err)
			}
		}
		return
	}
	if err := r.api.DeleteCollection(ctx, background, metav1.ListOptions{LabelSelector: "page=" + page}); err != nil {
		t.Fatalf("delete collection: %v", err)
	}
	list, err := r.api.List(ctx, metav1.ListOptions{LabelSelector: "page=" + page})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d objects left after delete collection", len(list.Items))
	}
}

// testFinalizers deletes an object holding a finalizer: it stays, marked
// for deletion, until the finalizer is removed.
func (r *resourceRun) testFinalizers(t *testing.T) {
	ctx := testContext(t)
	name := r.rc.newName()
	obj := r.object(t, name, nil)
	obj.SetFinalizers([]string{holdFinalizer})
	if _, err := r.api.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := r.api.Delete(ctx, name, background); err != nil {
		t.Fatalf("delete: %v", err)
	}
	held, err := r.api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("object with a finalizer is gone after delete: %v", err)
	}
	if held.GetDeletionTimestamp() == nil {
		t.Errorf("object with a finalizer has no deletionTimestamp after delete")
	}
	if _, err := r.api.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove finalizer: %v", err)
	}
	if r.rc.terminates {
		// spec.finalizers still hold it until it is finalized.
		after, err := r.api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("terminating object gone while spec.finalizers remain: %v", err)
		}
		if after.GetDeletionTimestamp() == nil {
			t.Errorf("deletionTimestamp lost when metadata.finalizers were removed")
		}
		r.finalize(t, ctx, name)
		return
	}
	_, err = r.api.Get(ctx, name, metav1.GetOptions{})
	wantStatus(t, err, 404)
}

// path is the URL path of the named object.
func (r *resourceRun) path(name string) string {
	return objectPath(r.rc.gvr, r.served.namespaced, r.ns, name)
}

func objectPath(gvr schema.GroupVersionResource, namespaced bool, ns, name string) string {
	p := "/api/" + gvr.Version
	if gvr.Group != "" {
		p = path.Join("/apis", gvr.Group, gvr.Version)
	}
	if namespaced {
		p = path.Join(p, "namespaces", ns)
	}
	return path.Join(p, gvr.Resource, name)
}

// getProtobuf reads the named object in protobuf and decodes it into its
// client-go type.
func (r *resourceRun) getProtobuf(ctx context.Context, name string) (any, string, error) {
	rc, err := protobufREST(r.rc.gvr.GroupVersion())
	if err != nil {
		return nil, "", err
	}
	var ct string
	raw, err := rc.Get().AbsPath(r.path(name)).Do(ctx).ContentType(&ct).Raw()
	if err != nil {
		return nil, ct, err
	}
	if !bytes.HasPrefix(raw, []byte("k8s\x00")) {
		return nil, ct, fmt.Errorf("answer is not protobuf: %q", raw[:min(len(raw), 40)])
	}
	obj, _, err := clientscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	return obj, ct, err
}

// protobufConfig is config speaking protobuf, as controllers do.
func protobufConfig() *rest.Config {
	cfg := rest.CopyConfig(config)
	cfg.ContentType = protobufType
	cfg.AcceptContentTypes = protobufType + ",application/json"
	return cfg
}

func protobufREST(gv schema.GroupVersion) (*rest.RESTClient, error) {
	cfg := protobufConfig()
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = clientscheme.Codecs.WithoutConversion()
	return rest.RESTClientFor(cfg)
}

// recorder collects a watch's events as they arrive.
type recorder struct {
	mu     sync.Mutex
	events []watch.Event
}

func record(w watch.Interface) *recorder {
	r := &recorder{}
	go func() {
		for ev := range w.ResultChan() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
	}()
	return r
}

// waitFor returns the events so far once done holds for them, failing the
// test after 15s.
func (r *recorder) waitFor(t *testing.T, done func([]watch.Event) bool) []watch.Event {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		evs := slices.Clone(r.events)
		r.mu.Unlock()
		if done(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch events after 15s: %v", eventTypes(evs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func eventTypes(evs []watch.Event) []watch.EventType {
	out := make([]watch.EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// waitForServerStatus waits until a server controller has written the
// object's status conditions and returns the object as it then is.
func (r *resourceRun) waitForServerStatus(t *testing.T, ctx context.Context, name string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if got, err = r.api.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		return len(conds) > 0, nil
	})
	if err != nil {
		t.Fatalf("status conditions of %s never written: %v", name, err)
	}
	return got
}
