package build

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Layer builds the Spec's single filesystem layer in memory. Every header carries the
// Spec's creation time, uid/gid 0 and no user or group names, and entries come in a fixed
// order, so the layer digest depends only on paths, modes and file contents.
func Layer(s Spec) (v1.Layer, error) {
	raw, err := layerTar(s)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("compress layer: %w", err)
	}
	return layer, nil
}

// layerTar returns the uncompressed layer tarball.
func layerTar(s Spec) ([]byte, error) {
	t, err := newTree(s)
	if err != nil {
		return nil, err
	}
	mtime := createdTime(s)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range t.sortedPaths() {
		if err := writeEntry(tw, p, t[p], mtime); err != nil {
			return nil, fmt.Errorf("layer entry /%s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close layer tar: %w", err)
	}
	return buf.Bytes(), nil
}

// writeEntry writes one header (and a file's contents) to the layer tar.
func writeEntry(tw *tar.Writer, p string, e entry, mtime time.Time) error {
	hdr := &tar.Header{Name: p, Mode: e.perm, ModTime: mtime}
	switch e.kind {
	case kindDir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
		return tw.WriteHeader(hdr)
	case kindSymlink:
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.linkname
		return tw.WriteHeader(hdr)
	}
	f, err := os.Open(e.source)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	// CopyN so a file that grows while we read cannot corrupt the archive.
	if _, err := io.CopyN(tw, f, info.Size()); err != nil {
		return fmt.Errorf("copy %s: %w", e.source, err)
	}
	return nil
}

// createdTime is the Spec's creation time in whole seconds, the epoch when unset.
func createdTime(s Spec) time.Time {
	if s.Created.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return s.Created.Truncate(time.Second).UTC()
}
