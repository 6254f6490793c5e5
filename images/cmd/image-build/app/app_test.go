package app

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// env is a fixed environment for Run.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// layerIndex reads the archive's image and returns its layer's entries as
// "name type linkname" lines.
func layerIndex(t *testing.T, archive, ref string) []string {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatalf("read %s as %s: %v", archive, ref, err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var lines []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return lines
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.TrimSpace(hdr.Name+" "+string(hdr.Typeflag)+" "+hdr.Linkname))
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "trireme-apiserver")
	if err := os.WriteFile(bin, []byte("ELF pretend"), 0o755); err != nil {
		t.Fatal(err)
	}
	busybox := filepath.Join(dir, "busybox")
	if err := os.WriteFile(busybox, []byte("#!/bin/sh\nprintf 'sh\\nsleep\\nwget\\n'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantErr   string
		ref       string
		wantLayer []string
		wantCfg   map[string]string
	}{
		{
			name: "apiserver image",
			args: []string{"--name", "trireme.dev/trireme-apiserver:v0.1.0", "--file", bin + "=/usr/local/bin/trireme-apiserver:0755",
				"--entrypoint", "/usr/local/bin/trireme-apiserver", "--user", "65532", "--env", "GODEBUG=x=1"},
			env:       map[string]string{"SOURCE_DATE_EPOCH": "1700000000"},
			ref:       "trireme.dev/trireme-apiserver:v0.1.0",
			wantLayer: []string{"usr/ 5", "usr/local/ 5", "usr/local/bin/ 5", "usr/local/bin/trireme-apiserver 0"},
			wantCfg: map[string]string{
				"created": `"2023-11-14T22:13:20Z"`, "architecture": `"amd64"`, "os": `"linux"`,
				"config": `{"Entrypoint":["/usr/local/bin/trireme-apiserver"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","GODEBUG=x=1"],"User":"65532"}`,
			},
		},
		{
			name: "busybox image with applet links and an explicit link",
			args: []string{"--name", "trireme.dev/busybox:1.35", "--file", busybox + "=/bin/busybox:0755", "--busybox-links", "/bin/busybox",
				"--symlink", "/bin/busybox=/bin/sh", "--cmd", "sh", "--dir", "/tmp:1777"},
			ref:       "trireme.dev/busybox:1.35",
			wantLayer: []string{"bin/ 5", "bin/busybox 0", "bin/sh 2 /bin/busybox", "bin/sleep 2 busybox", "bin/wget 2 busybox", "tmp/ 5"},
			wantCfg:   map[string]string{"created": `"1970-01-01T00:00:00Z"`},
		},
		{name: "missing name", args: []string{"--file", bin + "=/x"}, wantErr: `"name"`},
		{name: "positional argument", args: []string{"--name", "trireme.dev/x:1", "extra"}, wantErr: "unknown command"},
		{name: "bad file flag", args: []string{"--name", "trireme.dev/x:1", "--file", "nothing"}, wantErr: "--file"},
		{name: "bad dir flag", args: []string{"--name", "trireme.dev/x:1", "--dir", "tmp"}, wantErr: "--dir"},
		{name: "bad symlink flag", args: []string{"--name", "trireme.dev/x:1", "--symlink", "nothing"}, wantErr: "--symlink"},
		{name: "busybox links without the file", args: []string{"--name", "trireme.dev/x:1", "--busybox-links", "/bin/busybox"}, wantErr: "no --file puts a binary there"},
		{name: "bad SOURCE_DATE_EPOCH", args: []string{"--name", "trireme.dev/x:1"}, env: map[string]string{"SOURCE_DATE_EPOCH": "soon"}, wantErr: "SOURCE_DATE_EPOCH"},
		{name: "reference without tag", args: []string{"--name", "trireme.dev/x", "--file", bin + "=/x"}, wantErr: "image reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out", strings.ReplaceAll(tt.name, " ", "-")+".tar")
			args := append([]string{"--out", out}, tt.args...)
			var stdout, stderr bytes.Buffer
			err := Run(context.Background(), args, &stdout, &stderr, env(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Run error = %v, want one containing %q", err, tt.wantErr)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("failed run left %s (stat %v)", out, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v (stderr %s)", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), "Wrote "+out+": "+tt.ref+" (image ID sha256:") {
				t.Errorf("stdout %q does not report the archive", stdout.String())
			}
			got := layerIndex(t, out, tt.ref)
			sort.Strings(tt.wantLayer)
			if strings.Join(got, "\n") != strings.Join(tt.wantLayer, "\n") {
				t.Errorf("layer:\n got %q\nwant %q", got, tt.wantLayer)
			}
			tag, _ := name.NewTag(tt.ref)
			img, err := tarball.ImageFromPath(out, &tag)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := img.RawConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			var cfg map[string]json.RawMessage
			if err := json.Unmarshal(raw, &cfg); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.wantCfg {
				if string(cfg[k]) != want {
					t.Errorf("config %s = %s, want %s", k, cfg[k], want)
				}
			}
		})
	}
}

func TestRunReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("pause binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	build := func(out string) []byte {
		args := []string{"--name", "trireme.dev/pause:v0.1.0", "--out", out, "--file", bin + "=/pause", "--entrypoint", "/pause", "--user", "65535"}
		if err := Run(context.Background(), args, io.Discard, io.Discard, env(map[string]string{"SOURCE_DATE_EPOCH": "1700000000"})); err != nil {
			t.Fatalf("Run: %v", err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(build(filepath.Join(dir, "a.tar")), build(filepath.Join(dir, "b.tar"))) {
		t.Fatal("two runs with the same flags wrote different archives")
	}
}
