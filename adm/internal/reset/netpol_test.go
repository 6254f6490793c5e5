package reset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestCleanupNetworkPolicy(t *testing.T) {
	tests := []struct {
		name    string
		cmds    fakeCommands
		ran     []string // every command, queries included
		reports []string
		wantErr string
	}{
		{
			name:    "table present",
			cmds:    fakeCommands{tools: []string{"nft"}, present: []string{"nft list table inet trireme-netpol"}},
			ran:     []string{"nft list table inet trireme-netpol", "nft delete table inet trireme-netpol"},
			reports: []string{"removed trireme-netpol's nftables table inet trireme-netpol"},
		},
		{
			name: "no table",
			cmds: fakeCommands{tools: []string{"nft"}},
			ran:  []string{"nft list table inet trireme-netpol"},
		},
		{
			name: "no nft",
			cmds: fakeCommands{present: []string{"nft list table inet trireme-netpol"}},
		},
		{
			name: "delete refused",
			cmds: fakeCommands{tools: []string{"nft"}, present: []string{"nft list table inet trireme-netpol"},
				failing: []string{"nft delete table inet trireme-netpol"}},
			ran:     []string{"nft list table inet trireme-netpol", "nft delete table inet trireme-netpol"},
			wantErr: "nft delete table inet trireme-netpol: exit status 1: Operation not permitted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reports []string
			err := cleanupNetworkPolicy(context.Background(), &tt.cmds, func(format string, args ...any) {
				reports = append(reports, fmt.Sprintf(format, args...))
			})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
			if !slices.Equal(tt.cmds.ran, tt.ran) {
				t.Errorf("ran\n%s\nwant\n%s", strings.Join(tt.cmds.ran, "\n"), strings.Join(tt.ran, "\n"))
			}
			if !slices.Equal(reports, tt.reports) {
				t.Errorf("reported %q, want %q", reports, tt.reports)
			}
		})
	}
}
