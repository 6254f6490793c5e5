package workflow

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRunner(t *testing.T) {
	var ran []string
	ph := func(name string, err error) Phase {
		return Phase{Name: name, Short: "do " + name, Run: func(_ context.Context, s *Status) error {
			ran = append(ran, name)
			s.Printf("detail of %s", name)
			return err
		}}
	}
	boom := errors.New("boom")
	tests := []struct {
		name    string
		phases  []Phase
		skip    []string
		wantRan []string
		wantErr string
		wantOut []string
	}{
		{"all", []Phase{ph("a", nil), ph("b", nil)}, nil, []string{"a", "b"}, "", []string{"[a] do a ... ok", "    detail of a", "[b] do b ... ok"}},
		{"skip", []Phase{ph("a", nil), ph("b", nil)}, []string{"a"}, []string{"b"}, "", []string{"[a] skipped", "[b] do b ... ok"}},
		{"stop at error", []Phase{ph("a", boom), ph("b", nil)}, nil, []string{"a"}, "phase a: boom", []string{"[a] do a ... failed"}},
		{"unknown skip", []Phase{ph("a", nil)}, []string{"x"}, nil, `unknown phase "x"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = nil
			var out bytes.Buffer
			err := (&Runner{Out: &out}).Run(context.Background(), tt.phases, tt.skip)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			var pe *PhaseError
			if err != nil && strings.HasPrefix(tt.wantErr, "phase ") && (!errors.As(err, &pe) || pe.Phase != "a" || !errors.Is(err, boom)) {
				t.Errorf("error %v is not a PhaseError of a wrapping boom", err)
			}
			if strings.Join(ran, ",") != strings.Join(tt.wantRan, ",") {
				t.Errorf("ran %v, want %v", ran, tt.wantRan)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output %q lacks %q", out.String(), w)
				}
			}
		})
	}
}

func TestSpinner(t *testing.T) {
	var out bytes.Buffer
	r := &Runner{Out: &out, TTY: true}
	if err := r.RunOne(context.Background(), Phase{Name: "x", Short: "doing x", Run: func(context.Context, *Status) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "✓ doing x") {
		t.Errorf("TTY output %q lacks the tick", out.String())
	}
	out.Reset()
	r.TTY = false
	_ = r.RunOne(context.Background(), Phase{Name: "w", Short: "waiting", Run: func(_ context.Context, s *Status) error {
		s.Progress("for a")
		s.Progress("for a")
		s.Progress("for b")
		return nil
	}})
	if strings.Count(out.String(), "[w] for a") != 1 || !strings.Contains(out.String(), "[w] for b") {
		t.Errorf("progress lines: %q, want each change once", out.String())
	}
}
