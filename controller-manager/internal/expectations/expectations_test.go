package expectations

import (
	"testing"
	"time"
)

func TestSatisfied(t *testing.T) {
	tests := []struct {
		name string
		run  func(s *Store)
		want bool
	}{
		{"nothing expected", func(*Store) {}, true},
		{"creations pending", func(s *Store) { s.ExpectCreations("a", 2); s.CreationObserved("a") }, false},
		{"creations seen", func(s *Store) { s.ExpectCreations("a", 2); s.CreationObserved("a"); s.CreationObserved("a") }, true},
		{"deletion pending", func(s *Store) { s.ExpectDeletions("a", []string{"ns/p1", "ns/p2"}); s.DeletionObserved("a", "ns/p1") }, false},
		{"deletion seen twice counts once", func(s *Store) {
			s.ExpectDeletions("a", []string{"ns/p1", "ns/p2"})
			s.DeletionObserved("a", "ns/p1")
			s.DeletionObserved("a", "ns/p1")
		}, false},
		{"deletions seen", func(s *Store) {
			s.ExpectDeletions("a", []string{"ns/p1"})
			s.DeletionObserved("a", "ns/p1")
		}, true},
		{"expired", func(s *Store) {
			s.ExpectCreations("a", 1)
			s.now = func() time.Time { return time.Now().Add(Timeout + time.Second) }
		}, true},
		{"deleted key", func(s *Store) { s.ExpectCreations("a", 1); s.Delete("a") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			tt.run(s)
			if got := s.Satisfied("a"); got != tt.want {
				t.Errorf("Satisfied = %v, want %v", got, tt.want)
			}
		})
	}
}
