package defaults

import (
	"bytes"
	"encoding/json"
	"testing"
)

// defaultingCase is one table entry: an object as a client sends it and the
// object kube-apiserver stores for it.
type defaultingCase[T any] struct {
	name string
	in   *T
	want *T
}

// runDefaulting applies fn to each case and compares the result with want as
// JSON, the form clients see: quantities compare by value, and map order
// does not matter.
func runDefaulting[T any](t *testing.T, fn func(*T), cases []defaultingCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fn(tc.in)
			assertSameJSON(t, tc.in, tc.want)
		})
	}
}

func assertSameJSON(t *testing.T, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("marshal expectation: %v", err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("defaulted object differs\n got: %s\nwant: %s", g, w)
	}
}
