package build

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The archive is a docker-archive (manifest.json + config + gzipped layers, as `docker
// save` writes) rather than an OCI layout tar. Tried against containerd 1.6.20 (Debian
// 12) `ctr -n k8s.io images import`: the docker-archive is named from its RepoTags and
// unpacked; an OCI layout tar is named only through an index annotation
// (io.containerd.image.name, or org.opencontainers.image.ref.name holding a full
// reference; a bare tag there becomes "import-<date>:<tag>") and without one imports
// silently with no name. A docker-archive is also what `docker load` and `podman load` read.
// go-containerregistry writes the archive's own tar headers without timestamps, so the
// bytes depend only on the image.

// Write writes the Spec's image to w as a docker-archive tagged Spec.Ref and returns the
// image ID (the config digest), which containerd and crictl show for the imported image.
func Write(s Spec, w io.Writer) (v1.Hash, error) {
	ref, err := tag(s)
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := Image(s)
	if err != nil {
		return v1.Hash{}, err
	}
	id, err := img.ConfigName()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image %s: config digest: %w", s.Ref, err)
	}
	if err := tarball.Write(ref, img, w); err != nil {
		return v1.Hash{}, fmt.Errorf("write archive for %s: %w", s.Ref, err)
	}
	return id, nil
}

// WriteFile writes the Spec's archive to path, creating its directory. The file appears
// complete or not at all: it is written beside path and renamed into place. It returns
// the image ID as Write does.
func WriteFile(s Spec, path string) (v1.Hash, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return v1.Hash{}, fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return v1.Hash{}, fmt.Errorf("create archive for %s: %w", s.Ref, err)
	}
	defer os.Remove(tmp.Name())
	id, err := Write(s, tmp)
	if err != nil {
		tmp.Close()
		return v1.Hash{}, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return v1.Hash{}, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return v1.Hash{}, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return v1.Hash{}, fmt.Errorf("rename archive into %s: %w", path, err)
	}
	return id, nil
}
