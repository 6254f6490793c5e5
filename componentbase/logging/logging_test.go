package logging

import "testing"

func TestNew(t *testing.T) {
	tests := []struct {
		format  string
		v       int
		wantErr bool
	}{
		{"text", 0, false},
		{"", 2, false},
		{"json", 4, false},
		{"xml", 0, true},
		{"text", -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			log, flush, err := New(tt.format, tt.v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New(%q, %d) err = %v, want error %v", tt.format, tt.v, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			defer flush()
			if !log.V(tt.v).Enabled() || log.V(tt.v+1).Enabled() {
				t.Errorf("verbosity %d not applied", tt.v)
			}
		})
	}
}
