package build

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBusyboxLinks(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, script string) string {
		return writeHostFile(t, filepath.Join(dir, name), "#!/bin/sh\n"+script+"\n", 0o755)
	}
	tests := []struct {
		name    string
		binary  string
		target  string
		want    []Symlink
		wantErr string
	}{
		{
			name:   "applets beside the binary",
			binary: fake("list", `[ "$1" = --list ] && printf 'cat\nsh\nbusybox\nwget\n'`),
			target: "/bin/busybox",
			want: []Symlink{
				{Target: "busybox", Link: "/bin/cat"},
				{Target: "busybox", Link: "/bin/sh"},
				{Target: "busybox", Link: "/bin/wget"},
			},
		},
		{
			name:   "binary in a deeper directory",
			binary: fake("deeper", `printf 'nc\n'`),
			target: "/usr/local/bin/busybox",
			want:   []Symlink{{Target: "busybox", Link: "/usr/local/bin/nc"}},
		},
		{name: "binary fails", binary: fake("fails", "echo broken >&2; exit 3"), target: "/bin/busybox", wantErr: "broken"},
		{name: "nothing listed", binary: fake("empty", "true"), target: "/bin/busybox", wantErr: "none listed"},
		{name: "path in applet name", binary: fake("slash", "echo ../evil"), target: "/bin/busybox", wantErr: "unexpected applet name"},
		{name: "relative target", binary: fake("rel", "echo sh"), target: "bin/busybox", wantErr: "not absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BusyboxLinks(context.Background(), tt.binary, tt.target)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("BusyboxLinks error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("BusyboxLinks: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BusyboxLinks = %+v, want %+v", got, tt.want)
			}
		})
	}
}
