// Package expectations records the pod creations and deletions a controller
// has asked for and not yet seen in its informer cache, so that it does not
// act twice on a stale cache (upstream's ControllerExpectations, with
// deletions tracked by pod key so a pod seen deleting and then deleted is
// counted once).
package expectations

import (
	"sync"
	"time"
)

// Timeout is how long unmet expectations hold a controller back: a watch
// event that never comes must not stall it for ever.
const Timeout = 5 * time.Minute

// Store holds the expectations of every controller object, by key.
type Store struct {
	mu    sync.Mutex
	now   func() time.Time
	items map[string]*record
}

type record struct {
	adds    int
	deletes map[string]struct{}
	since   time.Time
}

// New returns an empty store.
func New() *Store { return &Store{now: time.Now, items: map[string]*record{}} }

// Satisfied reports whether the controller for key may act: it expects
// nothing, everything it expected was seen, or the expectations expired.
func (s *Store) Satisfied(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.items[key]
	if !ok {
		return true
	}
	if r.adds <= 0 && len(r.deletes) == 0 {
		return true
	}
	return s.now().Sub(r.since) > Timeout
}

// ExpectCreations replaces key's expectations with n creations.
func (s *Store) ExpectCreations(key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[key] = &record{adds: n, deletes: map[string]struct{}{}, since: s.now()}
}

// ExpectDeletions replaces key's expectations with deletions of podKeys.
func (s *Store) ExpectDeletions(key string, podKeys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &record{deletes: map[string]struct{}{}, since: s.now()}
	for _, k := range podKeys {
		r.deletes[k] = struct{}{}
	}
	s.items[key] = r
}

// CreationObserved lowers key's expected creations by one: a creation was
// seen, or one asked for failed and will never be seen.
func (s *Store) CreationObserved(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.items[key]; ok && r.adds > 0 {
		r.adds--
	}
}

// DeletionObserved records that podKey's deletion was seen (or failed).
func (s *Store) DeletionObserved(key, podKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.items[key]; ok {
		delete(r.deletes, podKey)
	}
}

// Delete forgets key, as when its object is deleted.
func (s *Store) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, key)
}
