package build

import (
	"io/fs"
	"strings"
	"testing"
)

func TestParseFile(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    File
		wantErr string
	}{
		{name: "no mode keeps host bits", in: "_output/bin/pause=/pause", want: File{Source: "_output/bin/pause", Target: "/pause"}},
		{name: "octal mode", in: "bin/x=/usr/local/bin/x:0755", want: File{Source: "bin/x", Target: "/usr/local/bin/x", Mode: 0o755}},
		{name: "mode without leading zero", in: "a=/etc/a:644", want: File{Source: "a", Target: "/etc/a", Mode: 0o644}},
		{name: "setuid mode", in: "a=/bin/a:4755", want: File{Source: "a", Target: "/bin/a", Mode: 0o755 | fs.ModeSetuid}},
		{name: "missing equals", in: "/bin/busybox", wantErr: "want <hostpath>=<imagepath>"},
		{name: "empty image path", in: "a=", wantErr: "want <hostpath>=<imagepath>"},
		{name: "relative image path", in: "a=bin/a", wantErr: "not absolute"},
		{name: "root image path", in: "a=/", wantErr: "root directory"},
		{name: "non-octal mode", in: "a=/a:0789", wantErr: "not an octal permission"},
		{name: "mode too large", in: "a=/a:17777", wantErr: "not an octal permission"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFile(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseFile(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFile(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseFile(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseDir(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Dir
		wantErr string
	}{
		{name: "default mode", in: "/var/run", want: Dir{Path: "/var/run"}},
		{name: "sticky tmp", in: "/tmp:1777", want: Dir{Path: "/tmp", Mode: 0o777 | fs.ModeSticky}},
		{name: "relative path", in: "tmp:1777", wantErr: "not absolute"},
		{name: "bad mode", in: "/tmp:rwx", wantErr: "not an octal permission"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDir(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDir(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDir(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseDir(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSymlink(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Symlink
		wantErr string
	}{
		{name: "relative target", in: "busybox=/bin/sh", want: Symlink{Target: "busybox", Link: "/bin/sh"}},
		{name: "absolute target", in: "/usr/lib=/lib", want: Symlink{Target: "/usr/lib", Link: "/lib"}},
		{name: "missing link", in: "busybox", wantErr: "want <target>=<linkpath>"},
		{name: "relative link path", in: "busybox=bin/sh", wantErr: "not absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSymlink(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSymlink(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSymlink(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseSymlink(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSourceDateEpoch(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    int64
		zero    bool
		wantErr bool
	}{
		{name: "unset is zero time", value: "", zero: true},
		{name: "seconds", value: "1700000000", want: 1700000000},
		{name: "epoch itself", value: "0", want: 0},
		{name: "not a number", value: "yesterday", wantErr: true},
		{name: "negative", value: "-5", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SourceDateEpoch(func(k string) string {
				if k != "SOURCE_DATE_EPOCH" {
					t.Fatalf("unexpected lookup of %s", k)
				}
				return tt.value
			})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("SourceDateEpoch(%q) = %v, want error", tt.value, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("SourceDateEpoch(%q): %v", tt.value, err)
			}
			if tt.zero {
				if !got.IsZero() {
					t.Errorf("SourceDateEpoch(%q) = %v, want zero time", tt.value, got)
				}
				return
			}
			if got.Unix() != tt.want {
				t.Errorf("SourceDateEpoch(%q) = %d, want %d", tt.value, got.Unix(), tt.want)
			}
		})
	}
}
