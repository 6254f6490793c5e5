package garbagecollector

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// eventType is what an informer saw happen to an object.
type eventType int

const (
	addOrUpdate eventType = iota
	deleted
	// virtualDeleted says the collector found a virtual node's object
	// absent from the apiserver.
	virtualDeleted
)

// event is one change fed to the graph, in the order informers saw them.
type event struct {
	typ eventType
	id  identity
	// meta is the object's metadata for addOrUpdate; nil otherwise.
	meta *metav1.ObjectMeta
}

// process applies one event to the graph and returns the UIDs that need a
// deletion attempt and those that need their dependents orphaned.
func (g *graph) process(e *event) (attemptDelete, attemptOrphan []types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n, exists := g.nodes[e.id.UID]
	switch e.typ {
	case addOrUpdate:
		m := e.meta
		if !exists {
			n = &node{id: e.id, dependents: map[*node]struct{}{}}
			g.nodes[e.id.UID] = n
			attemptDelete = g.setOwners(n, m.OwnerReferences, attemptDelete)
		} else {
			if n.virtual {
				n.virtual = false
				// The identity a dependent guessed may be wrong in the
				// details; the object's own metadata is right.
				n.id = e.id
			}
			attemptDelete = g.setOwners(n, m.OwnerReferences, attemptDelete)
		}
		n.meta = m
		if m.DeletionTimestamp != nil {
			n.beingDeleted = true
			if slices.Contains(m.Finalizers, FinalizerOrphan) {
				attemptOrphan = append(attemptOrphan, n.id.UID)
			}
			if slices.Contains(m.Finalizers, FinalizerForeground) {
				n.deletingDependents = true
				for d := range n.dependents {
					attemptDelete = append(attemptDelete, d.id.UID)
				}
				attemptDelete = append(attemptDelete, n.id.UID)
			}
		}
	case deleted, virtualDeleted:
		if !exists {
			return nil, nil
		}
		if e.typ == virtualDeleted && !n.virtual {
			// An informer saw the object after all.
			return nil, nil
		}
		attemptDelete = g.remove(n, attemptDelete)
	}
	return attemptDelete, attemptOrphan
}

// setOwners replaces n's owner references and fixes the edges. Owners
// never seen get virtual nodes, queued so the collector checks that they
// exist; an owner waiting in foreground deletion that lost a dependent is
// queued to look again.
func (g *graph) setOwners(n *node, refs []metav1.OwnerReference, queue []types.UID) []types.UID {
	old := n.owners
	n.owners = slices.Clone(refs)
	for _, ref := range old {
		if slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == ref.UID }) {
			continue
		}
		if owner, ok := g.nodes[ref.UID]; ok {
			delete(owner.dependents, n)
			if owner.deletingDependents {
				queue = append(queue, owner.id.UID)
			}
			queue = g.dropIfOrphanVirtual(owner, queue)
		}
	}
	for _, ref := range refs {
		owner, ok := g.nodes[ref.UID]
		if !ok {
			owner = &node{
				id: identity{
					APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: n.id.Namespace,
					Name: ref.Name, UID: ref.UID,
				},
				virtual:    true,
				dependents: map[*node]struct{}{},
			}
			g.nodes[ref.UID] = owner
		}
		owner.dependents[n] = struct{}{}
		if !owner.virtual && owner.id.Namespace != "" && owner.id.Namespace != n.id.Namespace {
			// A namespaced owner can only be in its dependent's namespace; a
			// reference across namespaces (or from a cluster-scoped object)
			// never resolves, which the collector reports.
			queue = append(queue, n.id.UID)
		}
		if owner.virtual {
			// Not seen yet: perhaps never will be, if it is gone.
			queue = append(queue, ref.UID)
		}
		// A changed blockOwnerDeletion may unblock a foreground deletion.
		if owner.deletingDependents {
			queue = append(queue, owner.id.UID)
		}
	}
	return queue
}

// remove takes n out of the graph: its dependents are queued (their
// owner is gone), and so are its owners waiting on it in the foreground.
func (g *graph) remove(n *node, queue []types.UID) []types.UID {
	delete(g.nodes, n.id.UID)
	for d := range n.dependents {
		queue = append(queue, d.id.UID)
	}
	for _, ref := range n.owners {
		owner, ok := g.nodes[ref.UID]
		if !ok {
			continue
		}
		delete(owner.dependents, n)
		if owner.deletingDependents {
			queue = append(queue, owner.id.UID)
		}
		queue = g.dropIfOrphanVirtual(owner, queue)
	}
	return queue
}

// dropIfOrphanVirtual forgets a virtual node no dependent points at any
// more.
func (g *graph) dropIfOrphanVirtual(n *node, queue []types.UID) []types.UID {
	if n.virtual && len(n.dependents) == 0 {
		delete(g.nodes, n.id.UID)
	}
	return queue
}
