package garbagecollector

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func cmID(name string) identity {
	return identity{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: name, UID: types.UID(name + "-uid")}
}

func ref(name string, block bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: types.UID(name + "-uid")}
	if block {
		r.BlockOwnerDeletion = &block
	}
	return r
}

func add(name string, owners []metav1.OwnerReference, deleting bool, finalizers ...string) *event {
	m := &metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid"), OwnerReferences: owners, Finalizers: finalizers}
	if deleting {
		now := metav1.NewTime(time.Now())
		m.DeletionTimestamp = &now
	}
	return &event{typ: addOrUpdate, id: cmID(name), meta: m}
}

func uids(names ...string) []types.UID {
	var out []types.UID
	for _, n := range names {
		out = append(out, types.UID(n+"-uid"))
	}
	return out
}

func TestGraphProcess(t *testing.T) {
	tests := []struct {
		name        string
		setup       []*event
		event       *event
		wantDelete  []types.UID
		wantOrphan  []types.UID
		wantVirtual []string
		wantAbsent  []string
	}{
		{
			name:        "dependent of an unseen owner makes it virtual and checks it",
			event:       add("child", []metav1.OwnerReference{ref("owner", false)}, false),
			wantDelete:  uids("owner"),
			wantVirtual: []string{"owner"},
		},
		{
			name:       "dependent of a known owner queues nothing",
			setup:      []*event{add("owner", nil, false)},
			event:      add("child", []metav1.OwnerReference{ref("owner", false)}, false),
			wantDelete: nil,
		},
		{
			name:       "owner deleted queues its dependents",
			setup:      []*event{add("owner", nil, false), add("a", []metav1.OwnerReference{ref("owner", false)}, false), add("b", []metav1.OwnerReference{ref("owner", true)}, false)},
			event:      &event{typ: deleted, id: cmID("owner")},
			wantDelete: uids("a", "b"),
			wantAbsent: []string{"owner"},
		},
		{
			name:       "foreground deletion queues the dependents and the owner",
			setup:      []*event{add("owner", nil, false), add("a", []metav1.OwnerReference{ref("owner", true)}, false)},
			event:      add("owner", nil, true, FinalizerForeground),
			wantDelete: uids("a", "owner"),
		},
		{
			name:       "orphan finalizer queues the owner for orphaning",
			setup:      []*event{add("owner", nil, false), add("a", []metav1.OwnerReference{ref("owner", true)}, false)},
			event:      add("owner", nil, true, FinalizerOrphan),
			wantOrphan: uids("owner"),
		},
		{
			name: "dependent of a foreground owner leaving queues the owner",
			setup: []*event{add("owner", nil, false), add("a", []metav1.OwnerReference{ref("owner", true)}, false),
				add("owner", nil, true, FinalizerForeground)},
			event:      &event{typ: deleted, id: cmID("a")},
			wantDelete: uids("owner"),
		},
		{
			name:       "virtual delete of an observed node is ignored",
			setup:      []*event{add("owner", nil, false)},
			event:      &event{typ: virtualDeleted, id: cmID("owner")},
			wantDelete: nil,
		},
		{
			name:       "virtual delete of a missing owner queues its dependents",
			setup:      []*event{add("child", []metav1.OwnerReference{ref("ghost", false)}, false)},
			event:      &event{typ: virtualDeleted, id: cmID("ghost")},
			wantDelete: uids("child"),
			wantAbsent: []string{"ghost"},
		},
		{
			name: "owner reference in another namespace queues the dependent",
			setup: []*event{{typ: addOrUpdate, id: identity{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other", Name: "owner", UID: "owner-uid"},
				meta: &metav1.ObjectMeta{Name: "owner", Namespace: "other", UID: "owner-uid"}}},
			event:      add("child", []metav1.OwnerReference{ref("owner", false)}, false),
			wantDelete: uids("child"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph()
			for _, e := range tt.setup {
				g.process(e)
			}
			del, orphan := g.process(tt.event)
			slices.Sort(del)
			slices.Sort(tt.wantDelete)
			if !slices.Equal(del, tt.wantDelete) {
				t.Errorf("attempt to delete = %v, want %v", del, tt.wantDelete)
			}
			if !slices.Equal(orphan, tt.wantOrphan) {
				t.Errorf("attempt to orphan = %v, want %v", orphan, tt.wantOrphan)
			}
			for _, name := range tt.wantVirtual {
				v, ok := g.get(types.UID(name + "-uid"))
				if !ok || !v.virtual {
					t.Errorf("%s: virtual node missing (found %v)", name, ok)
				}
			}
			for _, name := range tt.wantAbsent {
				if _, ok := g.get(types.UID(name + "-uid")); ok {
					t.Errorf("%s still in the graph", name)
				}
			}
		})
	}
}

func TestGraphBlockingDependents(t *testing.T) {
	g := newGraph()
	g.process(add("owner", nil, false))
	g.process(add("blocking", []metav1.OwnerReference{ref("owner", true)}, false))
	g.process(add("free", []metav1.OwnerReference{ref("owner", false)}, false))
	v, _ := g.get("owner-uid")
	blocking := 0
	for _, d := range v.dependents {
		if d.blocking {
			blocking++
			if d.id.Name != "blocking" {
				t.Errorf("%s counted as blocking", d.id.Name)
			}
		}
	}
	if len(v.dependents) != 2 || blocking != 1 {
		t.Errorf("dependents %d blocking %d, want 2 and 1", len(v.dependents), blocking)
	}
	// Dropping the reference removes the edge and forgets nothing else.
	g.process(add("blocking", nil, false))
	v, _ = g.get("owner-uid")
	if len(v.dependents) != 1 {
		t.Errorf("dependents after dropping a reference = %d, want 1", len(v.dependents))
	}
}
