package build

import (
	"archive/tar"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tarEntry is what a test checks about one layer entry.
type tarEntry struct {
	Name     string
	Type     byte
	Mode     int64
	Linkname string
	Content  string
}

// writeHostFile creates a host file for a test with the given contents and mode.
func writeHostFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// layerEntries builds the Spec's layer and reads it back, checking the fields every
// entry must share for the layer to be reproducible.
func layerEntries(t *testing.T, s Spec) []tarEntry {
	t.Helper()
	layer, err := Layer(s)
	if err != nil {
		t.Fatalf("Layer: %v", err)
	}
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	wantTime := createdTime(s)
	var got []tarEntry
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || hdr.Gname != "" {
			t.Errorf("%s: owner %d:%d (%q:%q), want 0:0 without names", hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname)
		}
		if !hdr.ModTime.Equal(wantTime) {
			t.Errorf("%s: mtime %v, want %v", hdr.Name, hdr.ModTime, wantTime)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tarEntry{Name: hdr.Name, Type: hdr.Typeflag, Mode: hdr.Mode, Linkname: hdr.Linkname, Content: string(content)})
	}
	return got
}

func TestLayerContents(t *testing.T) {
	host := t.TempDir()
	bin := writeHostFile(t, filepath.Join(host, "bin", "apiserver"), "APISERVER", 0o700)
	conf := writeHostFile(t, filepath.Join(host, "conf"), "conf", 0o600)
	base := filepath.Join(host, "base")
	writeHostFile(t, filepath.Join(base, "etc", "passwd"), "root:x:0:0::/root:/bin/sh\n", 0o644)
	writeHostFile(t, filepath.Join(base, "etc", "group"), "root:x:0:\n", 0o644)
	writeHostFile(t, filepath.Join(base, "etc", "hosts"), "base hosts", 0o644)
	if err := os.Mkdir(filepath.Join(base, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(base, "tmp"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("usr/lib", filepath.Join(base, "lib")); err != nil {
		t.Fatal(err)
	}
	base2 := filepath.Join(host, "base2")
	writeHostFile(t, filepath.Join(base2, "etc", "group"), "second group", 0o640)

	tests := []struct {
		name string
		spec Spec
		want []tarEntry
	}{
		{
			name: "single binary gets parent directories",
			spec: Spec{Files: []File{{Source: bin, Target: "/usr/local/bin/trireme-apiserver", Mode: 0o755}}},
			want: []tarEntry{
				{Name: "usr/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/local/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/local/bin/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/local/bin/trireme-apiserver", Type: tar.TypeReg, Mode: 0o755, Content: "APISERVER"},
			},
		},
		{
			name: "host mode kept when none given",
			spec: Spec{Files: []File{{Source: conf, Target: "/etc/conf"}}},
			want: []tarEntry{
				{Name: "etc/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "etc/conf", Type: tar.TypeReg, Mode: 0o600, Content: "conf"},
			},
		},
		{
			name: "entries sorted by path component whatever the flag order",
			spec: Spec{
				Files: []File{
					{Source: conf, Target: "/a-b", Mode: 0o644},
					{Source: conf, Target: "/a/b", Mode: 0o644},
					{Source: bin, Target: "/a.c", Mode: 0o755},
				},
			},
			want: []tarEntry{
				{Name: "a/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "a/b", Type: tar.TypeReg, Mode: 0o644, Content: "conf"},
				{Name: "a-b", Type: tar.TypeReg, Mode: 0o644, Content: "conf"},
				{Name: "a.c", Type: tar.TypeReg, Mode: 0o755, Content: "APISERVER"},
			},
		},
		{
			name: "symlinks for busybox applets",
			spec: Spec{
				Files:    []File{{Source: bin, Target: "/bin/busybox", Mode: 0o755}},
				Symlinks: []Symlink{{Target: "busybox", Link: "/bin/sh"}, {Target: "/bin/busybox", Link: "/usr/bin/env"}},
			},
			want: []tarEntry{
				{Name: "bin/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "bin/busybox", Type: tar.TypeReg, Mode: 0o755, Content: "APISERVER"},
				{Name: "bin/sh", Type: tar.TypeSymlink, Mode: 0o777, Linkname: "busybox"},
				{Name: "usr/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/bin/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/bin/env", Type: tar.TypeSymlink, Mode: 0o777, Linkname: "/bin/busybox"},
			},
		},
		{
			name: "base dirs copied, later base and explicit files win",
			spec: Spec{
				BaseDirs: []string{base, base2},
				Files:    []File{{Source: conf, Target: "/etc/hosts", Mode: 0o644}},
			},
			want: []tarEntry{
				{Name: "etc/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "etc/group", Type: tar.TypeReg, Mode: 0o640, Content: "second group"},
				{Name: "etc/hosts", Type: tar.TypeReg, Mode: 0o644, Content: "conf"},
				{Name: "etc/passwd", Type: tar.TypeReg, Mode: 0o644, Content: "root:x:0:0::/root:/bin/sh\n"},
				{Name: "lib", Type: tar.TypeSymlink, Mode: 0o777, Linkname: "usr/lib"},
				{Name: "tmp/", Type: tar.TypeDir, Mode: 0o777},
			},
		},
		{
			name: "explicit empty directories with their modes",
			spec: Spec{
				Dirs:  []Dir{{Path: "/tmp", Mode: 0o777 | fs.ModeSticky}, {Path: "/var/run"}, {Path: "/etc", Mode: 0o700}},
				Files: []File{{Source: conf, Target: "/etc/conf", Mode: 0o644}},
			},
			want: []tarEntry{
				{Name: "etc/", Type: tar.TypeDir, Mode: 0o700},
				{Name: "etc/conf", Type: tar.TypeReg, Mode: 0o644, Content: "conf"},
				{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
				{Name: "var/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "var/run/", Type: tar.TypeDir, Mode: 0o755},
			},
		},
		{
			name: "created time becomes every mtime",
			spec: Spec{
				Created: time.Date(2024, 5, 6, 7, 8, 9, 500, time.FixedZone("x", 3600)),
				Files:   []File{{Source: conf, Target: "/c", Mode: 0o644}},
			},
			want: []tarEntry{{Name: "c", Type: tar.TypeReg, Mode: 0o644, Content: "conf"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := layerEntries(t, tt.spec)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("layer entries:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestLayerErrors(t *testing.T) {
	host := t.TempDir()
	f := writeHostFile(t, filepath.Join(host, "f"), "f", 0o644)
	base := filepath.Join(host, "base")
	if err := os.MkdirAll(filepath.Join(base, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{
			name:    "same image path twice",
			spec:    Spec{Files: []File{{Source: f, Target: "/x"}, {Source: f, Target: "/x/"}}},
			wantErr: "given twice",
		},
		{
			name:    "file and symlink at one path",
			spec:    Spec{Files: []File{{Source: f, Target: "/bin/sh"}}, Symlinks: []Symlink{{Target: "busybox", Link: "/bin/sh"}}},
			wantErr: "given twice",
		},
		{
			name:    "file under a file",
			spec:    Spec{Files: []File{{Source: f, Target: "/x"}, {Source: f, Target: "/x/y"}}},
			wantErr: "parent /x is a file",
		},
		{
			name:    "file over a directory",
			spec:    Spec{Files: []File{{Source: f, Target: "/x/y"}, {Source: f, Target: "/x"}}},
			wantErr: "a directory is already there",
		},
		{
			name:    "file over a base dir directory",
			spec:    Spec{BaseDirs: []string{base}, Files: []File{{Source: f, Target: "/etc"}}},
			wantErr: "a directory is already there",
		},
		{
			name:    "file where a directory is asked for",
			spec:    Spec{Dirs: []Dir{{Path: "/x"}}, Files: []File{{Source: f, Target: "/x"}}},
			wantErr: "given twice",
		},
		{
			name:    "directory over a base dir file",
			spec:    Spec{BaseDirs: []string{filepath.Dir(f)}, Dirs: []Dir{{Path: "/f"}}},
			wantErr: "a file is already there",
		},
		{
			name:    "missing host file",
			spec:    Spec{Files: []File{{Source: filepath.Join(host, "missing"), Target: "/x"}}},
			wantErr: "no such file",
		},
		{
			name:    "host directory given as file",
			spec:    Spec{Files: []File{{Source: host, Target: "/x"}}},
			wantErr: "not a regular file",
		},
		{
			name:    "missing base dir",
			spec:    Spec{BaseDirs: []string{filepath.Join(host, "nope")}},
			wantErr: "no such file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Layer(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Layer error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
