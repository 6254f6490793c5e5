package testcluster

import (
	"bytes"
	"testing"
)

func TestForbiddenWatch(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   int
		panics int
	}{
		{"none", []string{"INFO synced\n", "ERROR conflict\n"}, 0, 0},
		{"one line", []string{`ERROR Sync failed {"error": "pods is forbidden: User \"system:serviceaccount:kube-system:x\" cannot list"}` + "\n"}, 1, 0},
		{"split across writes", []string{"ERROR configmaps is forb", "idden: User \"x\" cannot\nINFO ok\n"}, 1, 0},
		{"admission refusal", []string{"ERROR pods is forbidden: unable to create new content in namespace ns because it is being terminated\n"}, 0, 0},
		{"unterminated line not yet counted", []string{"secrets is forbidden: User \"x\""}, 0, 0},
		{"runtime panic", []string{"panic: runtime error: invalid memory address\n\ngoroutine 7 [running]:\n"}, 0, 1},
		{"observed panic split", []string{"E1130 sync.go:1] \"Observed a pan", "ic\" panic=\"boom\"\n"}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := &forbiddenWatch{out: &out}
			var all string
			for _, s := range tt.writes {
				if _, err := w.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
				all += s
			}
			if got := len(w.Lines()); got != tt.want {
				t.Errorf("lines = %d, want %d: %q", got, tt.want, w.Lines())
			}
			if got := len(w.Panics()); got != tt.panics {
				t.Errorf("panics = %d, want %d: %q", got, tt.panics, w.Panics())
			}
			if out.String() != all {
				t.Errorf("output passed on = %q, want %q", out.String(), all)
			}
		})
	}
}
