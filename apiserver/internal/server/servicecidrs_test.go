package server

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseServiceCIDRs(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "10.96.0.0/12", want: "[10.96.0.0/12]"},
		{in: "10.96.0.1/12", want: "[10.96.0.0/12]"},
		{in: "10.96.0.0/16,fd00:96::/112", want: "[10.96.0.0/16 fd00:96::/112]"},
		{in: "fd00:96::/112, 10.96.0.0/16", want: "[fd00:96::/112 10.96.0.0/16]"},
		{in: "", wantErr: "at least one CIDR"},
		{in: "10.96.0.0/16,10.97.0.0/16", wantErr: "same IP family"},
		{in: "fd00::/112,fd01::/112", wantErr: "same IP family"},
		{in: "10.96.0.0/16,fd00::/112,10.97.0.0/16", wantErr: "at most two"},
		{in: "10.96.0.0/16,nonsense", wantErr: "--service-cluster-ip-range[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseServiceCIDRs(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprint(got); s != tt.want {
				t.Errorf("got %s, want %s", s, tt.want)
			}
		})
	}
}
