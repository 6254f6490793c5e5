package garbagecollector

import (
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Finalizers the apiserver adds for foreground and orphan deletion; the
// collector removes them when their work is done.
const (
	FinalizerForeground = metav1.FinalizerDeleteDependents
	FinalizerOrphan     = metav1.FinalizerOrphanDependents
)

// identity names one object: an owner reference plus the namespace it
// lives in ("" for cluster-scoped objects).
type identity struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	UID        types.UID
}

func (id identity) String() string {
	return fmt.Sprintf("%s/%s %s/%s (%s)", id.APIVersion, id.Kind, id.Namespace, id.Name, id.UID)
}

// node is one object in the dependency graph. Fields are guarded by the
// graph's lock.
type node struct {
	id identity
	// virtual nodes are known only from dependents' owner references:
	// no informer has shown the object yet, so it may not exist.
	virtual bool
	// beingDeleted is set once the object carries a deletionTimestamp.
	beingDeleted bool
	// deletingDependents is set while a foreground deletion waits for the
	// blocking dependents to go.
	deletingDependents bool
	owners             []metav1.OwnerReference
	dependents         map[*node]struct{}
	// meta is the object's metadata as its informer last showed it (nil
	// for virtual nodes); informer objects are shared and never modified.
	meta *metav1.ObjectMeta
}

// graph maps UIDs to nodes; owner → dependents edges live in the nodes.
type graph struct {
	mu    sync.RWMutex
	nodes map[types.UID]*node
}

func newGraph() *graph { return &graph{nodes: map[types.UID]*node{}} }

// view is a copy of a node's state, safe to use outside the lock.
type view struct {
	id                 identity
	virtual            bool
	beingDeleted       bool
	deletingDependents bool
	owners             []metav1.OwnerReference
	meta               *metav1.ObjectMeta
	// dependents are the identities of the node's dependents, and for
	// each whether its reference to this node blocks the owner's deletion.
	dependents []dependentView
}

type dependentView struct {
	id                 identity
	blocking           bool
	deletingDependents bool
}

func (g *graph) get(uid types.UID) (view, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	if !ok {
		return view{}, false
	}
	v := view{
		id: n.id, virtual: n.virtual, beingDeleted: n.beingDeleted,
		deletingDependents: n.deletingDependents, owners: slices.Clone(n.owners), meta: n.meta,
	}
	for d := range n.dependents {
		dv := dependentView{id: d.id, deletingDependents: d.deletingDependents}
		for _, ref := range d.owners {
			if ref.UID == n.id.UID && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				dv.blocking = true
			}
		}
		v.dependents = append(v.dependents, dv)
	}
	return v, true
}
