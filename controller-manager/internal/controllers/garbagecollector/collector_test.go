package garbagecollector

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/record"
)

// preferred is a discovery stub serving fixed resource lists.
type preferred struct {
	discovery.ServerResourcesInterface
	lists []*metav1.APIResourceList
}

func (p preferred) ServerPreferredResources() ([]*metav1.APIResourceList, error) { return p.lists, nil }

var coreResources = &metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
	{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: []string{"get", "list", "watch", "delete", "patch"}},
	{Name: "events", Namespaced: true, Kind: "Event", Verbs: []string{"get", "list", "watch", "delete"}},
	{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: []string{"create"}},
	{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "patch"}},
}}

func TestDeletableResources(t *testing.T) {
	widgets := &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", Namespaced: true, Kind: "Widget", Verbs: []string{"get", "list", "watch", "delete"}},
	}}
	got, err := DeletableResources(preferred{lists: []*metav1.APIResourceList{coreResources, widgets}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "configmaps"}:                    "ConfigMap",
		{Group: "example.com", Version: "v1", Resource: "widgets"}: "Widget",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for gvr, kind := range want {
		if got[gvr].Kind != kind {
			t.Errorf("%s: kind %q, want %q", gvr, got[gvr].Kind, kind)
		}
	}
}

func partial(name string, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid"), OwnerReferences: owners, ResourceVersion: "1"},
	}
}

func newTestCollector(objs ...runtime.Object) (*Controller, *metadatafake.FakeMetadataClient) {
	scheme := metadatafake.NewTestScheme()
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, &metav1.PartialObjectMetadata{})
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"}, &metav1.PartialObjectMetadataList{})
	client := metadatafake.NewSimpleMetadataClient(scheme, objs...)
	gc := New(Options{Metadata: client, Recorder: record.NewFakeRecorder(10)})
	rm := restmapper.NewDiscoveryRESTMapper([]*restmapper.APIGroupResources{{
		Group:              metav1.APIGroup{Name: "", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "v1", Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "v1", Version: "v1"}},
		VersionedResources: map[string][]metav1.APIResource{"v1": coreResources.APIResources},
	}})
	gc.mapper.Store(&rm)
	return gc, client
}

func TestAttemptToDelete(t *testing.T) {
	tests := []struct {
		name        string
		objs        []*metav1.PartialObjectMetadata
		item        string
		wantDeleted bool
		wantOwners  int
	}{
		{"only owner missing: collected", []*metav1.PartialObjectMetadata{partial("child", ref("ghost", false))}, "child", true, 0},
		{"owner alive: kept", []*metav1.PartialObjectMetadata{partial("owner"), partial("child", ref("owner", false))}, "child", false, 1},
		{"one owner alive, one missing: kept, dangling reference dropped", []*metav1.PartialObjectMetadata{partial("owner"), partial("child", ref("owner", false), ref("ghost", false))}, "child", false, 1},
		{"owner replaced by a namesake: collected", []*metav1.PartialObjectMetadata{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "ns", UID: "other-uid"},
		}, partial("child", ref("owner", false))}, "child", true, 0},
		{"no owners: kept", []*metav1.PartialObjectMetadata{partial("child")}, "child", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			for _, o := range tt.objs {
				objs = append(objs, o)
			}
			gc, client := newTestCollector(objs...)
			for _, o := range tt.objs {
				gc.graph.process(&event{typ: addOrUpdate, id: identity{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: o.Name, UID: o.UID}, meta: &o.ObjectMeta})
			}
			if err := gc.attemptToDelete(context.Background(), tt.item+"-uid"); err != nil {
				t.Fatalf("attemptToDelete: %v", err)
			}
			cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
			got, err := client.Resource(cm).Namespace("ns").Get(context.Background(), tt.item, metav1.GetOptions{})
			if deleted := err != nil; deleted != tt.wantDeleted {
				t.Fatalf("deleted = %v, want %v (err %v)", deleted, tt.wantDeleted, err)
			}
			if !tt.wantDeleted && len(got.OwnerReferences) != tt.wantOwners {
				t.Errorf("owner references = %v, want %d", got.OwnerReferences, tt.wantOwners)
			}
		})
	}
}

func TestMappingUnknownKindAsksForRediscovery(t *testing.T) {
	gc, _ := newTestCollector()
	_, err := gc.mapping(identity{APIVersion: "example.com/v1", Kind: "Widget"})
	if !meta.IsNoMatchError(err) {
		t.Fatalf("err = %v, want no match", err)
	}
	select {
	case <-gc.resyncNow:
	default:
		t.Error("no rediscovery requested")
	}
}
