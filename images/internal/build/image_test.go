package build

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func TestImageConfig(t *testing.T) {
	bin := writeHostFile(t, filepath.Join(t.TempDir(), "pause"), "PAUSE", 0o755)
	files := []File{{Source: bin, Target: "/pause"}}
	tests := []struct {
		name string
		spec Spec
		want v1.Config
		arch string
		os   string
		time time.Time
	}{
		{
			name: "defaults give linux amd64 at the epoch with PATH",
			spec: Spec{Files: files, Entrypoint: []string{"/pause"}},
			want: v1.Config{Entrypoint: []string{"/pause"}, Env: []string{defaultPath}},
			arch: "amd64", os: "linux", time: time.Unix(0, 0),
		},
		{
			name: "all config fields kept",
			spec: Spec{
				Files:        files,
				Entrypoint:   []string{"/usr/local/bin/trireme-apiserver", "--v=2"},
				Cmd:          []string{"--help"},
				Env:          []string{"A=1", "B=two words"},
				User:         "65532",
				WorkingDir:   "/var/lib",
				Architecture: "arm64",
				Created:      time.Date(2025, 1, 2, 3, 4, 5, 999, time.UTC),
			},
			want: v1.Config{
				Entrypoint: []string{"/usr/local/bin/trireme-apiserver", "--v=2"},
				Cmd:        []string{"--help"},
				Env:        []string{defaultPath, "A=1", "B=two words"},
				User:       "65532",
				WorkingDir: "/var/lib",
			},
			arch: "arm64", os: "linux", time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		},
		{
			name: "explicit PATH replaces the default",
			spec: Spec{Files: files, Cmd: []string{"sh"}, Env: []string{"PATH=/bin"}},
			want: v1.Config{Cmd: []string{"sh"}, Env: []string{"PATH=/bin"}},
			arch: "amd64", os: "linux", time: time.Unix(0, 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Image(tt.spec)
			if err != nil {
				t.Fatalf("Image: %v", err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Config, tt.want) {
				t.Errorf("config:\n got %+v\nwant %+v", cfg.Config, tt.want)
			}
			if cfg.Architecture != tt.arch || cfg.OS != tt.os {
				t.Errorf("platform %s/%s, want %s/%s", cfg.OS, cfg.Architecture, tt.os, tt.arch)
			}
			if !cfg.Created.Time.Equal(tt.time) {
				t.Errorf("created %v, want %v", cfg.Created.Time, tt.time)
			}
			if len(cfg.History) != 1 || cfg.History[0].CreatedBy != createdBy || !cfg.History[0].Created.Time.Equal(tt.time) {
				t.Errorf("history %+v, want one %q entry at %v", cfg.History, createdBy, tt.time)
			}
			layers, err := img.Layers()
			if err != nil {
				t.Fatal(err)
			}
			if len(layers) != 1 {
				t.Fatalf("%d layers, want 1", len(layers))
			}
			diffID, err := layers[0].DiffID()
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != diffID || cfg.RootFS.Type != "layers" {
				t.Errorf("rootfs %+v, want layers [%s]", cfg.RootFS, diffID)
			}
			mt, err := img.MediaType()
			if err != nil {
				t.Fatal(err)
			}
			if mt != types.DockerManifestSchema2 {
				t.Errorf("manifest media type %s, want %s", mt, types.DockerManifestSchema2)
			}
		})
	}
}

func TestRefValidation(t *testing.T) {
	tests := []struct {
		name    string
		ref     string
		wantErr string
	}{
		{name: "full reference", ref: "trireme.dev/pause:v0.1.0"},
		{name: "nested repository", ref: "trireme.dev/e2e/busybox:1.36"},
		{name: "missing tag", ref: "trireme.dev/pause", wantErr: "image reference"},
		{name: "missing registry", ref: "pause:v1", wantErr: "registry"},
		{name: "digest instead of tag", ref: "trireme.dev/pause@sha256:" + strings.Repeat("a", 64), wantErr: "image reference"},
		{name: "upper case repository", ref: "trireme.dev/Pause:v1", wantErr: "image reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tag(Spec{Ref: tt.ref})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("tag(%q): %v", tt.ref, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("tag(%q) error = %v, want one containing %q", tt.ref, err, tt.wantErr)
			}
		})
	}
}
