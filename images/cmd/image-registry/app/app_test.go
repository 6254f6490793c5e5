package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"trireme.dev/images/internal/build"
)

// archive writes a one-file image archive named ref into dir.
func archive(t *testing.T, dir, ref string) string {
	t.Helper()
	src := filepath.Join(dir, "hello")
	if err := os.WriteFile(src, []byte(ref), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
	if _, err := build.WriteFile(build.Spec{Ref: ref, Files: []build.File{{Source: src, Target: "/hello"}}}, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServe pushes two archives and pulls each back under its repository and
// tag, as a containerd mirroring their registry asks for them.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	refs := []string{"registry.k8s.io/e2e-test-images/kitten:1.8", "registry.k8s.io/pause:3.10.2"}
	var archives []string
	for _, ref := range refs {
		archives = append(archives, archive(t, dir, ref))
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var stdout bytes.Buffer
	go func() {
		done <- Run(ctx, append([]string{"--listen", "127.0.0.1:0", "--dir", filepath.Join(dir, "blobs")}, archives...), &stdout, &stdout, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("Run ended before serving: %v\n%s", err, stdout.String())
	case <-time.After(time.Minute):
		t.Fatal("not serving after a minute")
	}
	for i, ref := range refs {
		tag, _ := name.NewTag(ref)
		want, err := tarball.ImageFromPath(archives[i], &tag)
		if err != nil {
			t.Fatal(err)
		}
		wantID, _ := want.ConfigName()
		local, err := name.NewTag(addr+"/"+tag.RepositoryStr()+":"+tag.TagStr(), name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		got, err := remote.Image(local)
		if err != nil {
			t.Fatalf("pull %s: %v", local, err)
		}
		if id, _ := got.ConfigName(); id != wantID {
			t.Errorf("%s: image ID %s, want %s", local, id, wantID)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
	if !strings.Contains(stdout.String(), "serving 2 image(s) at http://"+addr) {
		t.Errorf("output %q", stdout.String())
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notArchive := filepath.Join(dir, "not.tar")
	if err := os.WriteFile(notArchive, []byte("not a tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no archive", []string{"--dir", dir}, "requires at least 1 arg"},
		{"no dir", []string{notArchive}, "--dir is required"},
		{"missing archive", []string{"--listen", "127.0.0.1:0", "--dir", dir, filepath.Join(dir, "none.tar")}, "none.tar"},
		{"not an archive", []string{"--listen", "127.0.0.1:0", "--dir", dir, notArchive}, "not.tar"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), tt.args, &out, &out, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run(%q) = %v, want an error with %q", tt.args, err, tt.want)
			}
		})
	}
}
