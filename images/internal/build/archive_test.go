package build

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// archiveBytes writes the Spec's archive to memory.
func archiveBytes(t *testing.T, s Spec) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Write(s, &buf); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func TestWriteDeterministic(t *testing.T) {
	host := t.TempDir()
	bin := writeHostFile(t, filepath.Join(host, "bin"), "binary v1", 0o755)
	other := writeHostFile(t, filepath.Join(host, "other"), "binary v2", 0o755)
	base := filepath.Join(host, "base")
	writeHostFile(t, filepath.Join(base, "etc", "passwd"), "root:x:0:0::/:/bin/sh\n", 0o644)
	spec := func(mut func(*Spec)) Spec {
		s := Spec{
			Ref:        "trireme.dev/pause:v0.1.0",
			Files:      []File{{Source: bin, Target: "/pause", Mode: 0o755}},
			Symlinks:   []Symlink{{Target: "pause", Link: "/bin/pause"}},
			BaseDirs:   []string{base},
			Entrypoint: []string{"/pause"},
			User:       "65535",
			Created:    time.Unix(1700000000, 0),
		}
		if mut != nil {
			mut(&s)
		}
		return s
	}
	first := archiveBytes(t, spec(nil))

	t.Run("same inputs give identical bytes", func(t *testing.T) {
		if again := archiveBytes(t, spec(nil)); !bytes.Equal(first, again) {
			t.Fatal("two builds of the same spec differ")
		}
	})
	t.Run("host mtimes and flag order do not matter", func(t *testing.T) {
		later := time.Now().Add(time.Hour)
		for _, p := range []string{bin, filepath.Join(base, "etc", "passwd"), filepath.Join(base, "etc")} {
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}
		reordered := spec(func(s *Spec) {
			s.Files = append([]File{{Source: other, Target: "/zz", Mode: 0o755}}, s.Files...)
		})
		appended := spec(func(s *Spec) {
			s.Files = append(s.Files, File{Source: other, Target: "/zz", Mode: 0o755})
		})
		if !bytes.Equal(archiveBytes(t, reordered), archiveBytes(t, appended)) {
			t.Fatal("file order changed the archive")
		}
		if !bytes.Equal(first, archiveBytes(t, spec(nil))) {
			t.Fatal("touching host files changed the archive")
		}
	})
	changes := []struct {
		name string
		mut  func(*Spec)
	}{
		{name: "file contents", mut: func(s *Spec) { s.Files[0].Source = other }},
		{name: "file mode", mut: func(s *Spec) { s.Files[0].Mode = 0o700 }},
		{name: "created time", mut: func(s *Spec) { s.Created = s.Created.Add(time.Second) }},
		{name: "tag", mut: func(s *Spec) { s.Ref = "trireme.dev/pause:v0.1.1" }},
		{name: "user", mut: func(s *Spec) { s.User = "0" }},
	}
	for _, c := range changes {
		t.Run("changed "+c.name+" changes the bytes", func(t *testing.T) {
			if bytes.Equal(first, archiveBytes(t, spec(c.mut))) {
				t.Fatalf("changing the %s left the archive unchanged", c.name)
			}
		})
	}
}

// dockerManifest is one entry of a docker-archive's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func TestWriteFileDockerArchive(t *testing.T) {
	host := t.TempDir()
	bin := writeHostFile(t, filepath.Join(host, "pause"), "PAUSE", 0o755)
	out := filepath.Join(host, "_output", "images", "pause.tar")
	s := Spec{Ref: "trireme.dev/pause:v0.1.0", Files: []File{{Source: bin, Target: "/pause"}}, Entrypoint: []string{"/pause"}}
	id, err := WriteFile(s, out)
	if err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("archive members and manifest.json", func(t *testing.T) {
		members := map[string][]byte{}
		tr := tar.NewReader(bytes.NewReader(raw))
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !hdr.ModTime.Equal(time.Time{}) && hdr.ModTime.Unix() != 0 {
				t.Errorf("%s: mtime %v, want none", hdr.Name, hdr.ModTime)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			members[hdr.Name] = b
		}
		var manifests []dockerManifest
		if err := json.Unmarshal(members["manifest.json"], &manifests); err != nil {
			t.Fatalf("manifest.json: %v", err)
		}
		if len(manifests) != 1 || len(manifests[0].RepoTags) != 1 || manifests[0].RepoTags[0] != s.Ref || len(manifests[0].Layers) != 1 {
			t.Fatalf("manifest.json = %+v, want one image tagged %s with one layer", manifests, s.Ref)
		}
		if manifests[0].Config != id.String() && manifests[0].Config != id.Hex {
			t.Errorf("manifest.json config %s, want the returned image ID %s", manifests[0].Config, id)
		}
		for _, m := range append([]string{manifests[0].Config}, manifests[0].Layers...) {
			if _, ok := members[m]; !ok {
				t.Errorf("manifest.json names %s, which the archive lacks", m)
			}
		}
	})
	t.Run("go-containerregistry reads it back by tag", func(t *testing.T) {
		ref, err := name.NewTag(s.Ref)
		if err != nil {
			t.Fatal(err)
		}
		img, err := tarball.ImageFromPath(out, &ref)
		if err != nil {
			t.Fatalf("ImageFromPath: %v", err)
		}
		want, err := Image(s)
		if err != nil {
			t.Fatal(err)
		}
		gotDigest, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		wantDigest, err := want.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if gotDigest != wantDigest {
			t.Errorf("digest read back %s, want %s", gotDigest, wantDigest)
		}
	})
	t.Run("no temporary files left", func(t *testing.T) {
		entries, err := os.ReadDir(filepath.Dir(out))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "pause.tar" {
			t.Errorf("output dir holds %v, want only pause.tar", entries)
		}
	})
	t.Run("bad reference writes nothing", func(t *testing.T) {
		bad := filepath.Join(host, "bad.tar")
		if _, err := WriteFile(Spec{Ref: "pause", Files: s.Files}, bad); err == nil {
			t.Fatal("WriteFile accepted a reference without registry and tag")
		}
		if _, err := os.Stat(bad); !os.IsNotExist(err) {
			t.Errorf("stat %s = %v, want not exist", bad, err)
		}
	})
}
