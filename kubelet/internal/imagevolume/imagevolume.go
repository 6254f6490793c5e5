// Package imagevolume mounts OCI images as read-only pod volumes through
// containerd's own API (containerd 1.6's CRI has no image volumes): a
// view snapshot of the layers CRI unpacked, labelled as a GC root so
// containerd keeps it, mounted read-only on the volume's directory.
package imagevolume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	"github.com/containerd/containerd/api/types"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/identity"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

const (
	// Namespace is containerd's namespace of CRI's images and snapshots.
	Namespace = "k8s.io"
	// Snapshotter is the snapshotter CRI unpacks images with.
	Snapshotter = "overlayfs"
	// KeyPrefix starts the key of every view this package makes.
	KeyPrefix = "trireme.dev/image-volume/"

	// LabelPodUID, LabelDir and LabelImage record on a view its pod, the
	// directory it is mounted on and the image it shows, so that views
	// outlive the kubelet: a restarted kubelet finds its orphans and image
	// garbage collection what volumes use. LabelPodUID also marks the
	// views as Trireme's (triremeadm reset removes them by it).
	LabelPodUID = "trireme.dev/image-volume.pod-uid"
	LabelDir    = "trireme.dev/image-volume.dir"
	LabelImage  = "trireme.dev/image-volume.image"
	// labelGCRoot keeps a snapshot (and its parents) from containerd's
	// garbage collection.
	labelGCRoot = "containerd.io/gc.root"

	// maxConfigSize bounds the image configuration read: real ones are a
	// few KiB.
	maxConfigSize = 4 << 20
)

// View is an image volume: the view snapshot Key of Image (the runtime's
// image ID, the digest of its configuration) mounted on Dir for the pod
// PodUID.
type View struct {
	Key, Image, Dir, PodUID string
}

// Key is the view key of a pod's volume.
func Key(podUID, volume string) string {
	return KeyPrefix + podUID + "/" + volume
}

// Client mounts and unmounts image views through containerd's content and
// snapshots services.
type Client struct {
	conn      *grpc.ClientConn
	content   contentapi.ContentClient
	snapshots snapshotsapi.SnapshotsClient
	// mount and unmount are the system calls; tests replace them.
	mount   func(m *types.Mount, target string) error
	unmount func(target string) error
}

// Dial connects to containerd at endpoint (unix:///path or a path), the
// socket that serves CRI too. The connection is made lazily, on first use.
func Dial(endpoint string) (*Client, error) {
	if !strings.Contains(endpoint, "://") {
		endpoint = "unix://" + endpoint
	}
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect to containerd at %s: %w", endpoint, err)
	}
	c := New(contentapi.NewContentClient(conn), snapshotsapi.NewSnapshotsClient(conn))
	c.conn = conn
	return c, nil
}

// New returns a client over the given services.
func New(content contentapi.ContentClient, snapshots snapshotsapi.SnapshotsClient) *Client {
	return &Client{content: content, snapshots: snapshots, mount: mountReadOnly, unmount: unmountDir}
}

// Close closes the connection Dial made.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

func withNamespace(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "containerd-namespace", Namespace)
}

// Mount makes v.Dir show v.Image read-only. A Dir already mounted is left
// as it is, so Mount is called on every sync of the pod.
func (c *Client) Mount(ctx context.Context, v View) error {
	mounted, err := IsMountPoint(v.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if mounted {
		return nil
	}
	ctx = withNamespace(ctx)
	mounts, err := c.view(ctx, v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(v.Dir, 0o755); err != nil {
		return fmt.Errorf("volume directory: %w", err)
	}
	for _, m := range mounts {
		if err := c.mount(m, v.Dir); err != nil {
			return fmt.Errorf("mount image %s on %s: %w", v.Image, v.Dir, err)
		}
	}
	return nil
}

// view returns the mounts of v's view snapshot, making it if need be.
func (c *Client) view(ctx context.Context, v View) ([]*types.Mount, error) {
	config, err := c.readConfig(ctx, v.Image)
	if err != nil {
		return nil, err
	}
	parent, err := ChainID(config)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", v.Image, err)
	}
	resp, err := c.snapshots.View(ctx, &snapshotsapi.ViewSnapshotRequest{
		Snapshotter: Snapshotter, Key: v.Key, Parent: parent.String(),
		Labels: map[string]string{
			labelGCRoot: time.Now().UTC().Format(time.RFC3339),
			LabelPodUID: v.PodUID, LabelDir: v.Dir, LabelImage: v.Image,
		},
	})
	switch grpcstatus.Code(err) {
	case codes.OK:
		return resp.Mounts, nil
	case codes.AlreadyExists:
		// Made before the kubelet restarted or a mount failed.
		m, err := c.snapshots.Mounts(ctx, &snapshotsapi.MountsRequest{Snapshotter: Snapshotter, Key: v.Key})
		if err != nil {
			return nil, fmt.Errorf("mounts of view %s: %w", v.Key, err)
		}
		return m.Mounts, nil
	case codes.NotFound:
		return nil, fmt.Errorf("image %s is not unpacked for the %s snapshotter (snapshot %s): %w", v.Image, Snapshotter, parent, err)
	}
	return nil, fmt.Errorf("view of image %s: %w", v.Image, err)
}

// readConfig reads an image's configuration from the content store: the
// runtime's image ID is its digest.
func (c *Client) readConfig(ctx context.Context, image string) ([]byte, error) {
	d, err := digest.Parse(image)
	if err != nil {
		return nil, fmt.Errorf("image ID %q is not a digest: %w", image, err)
	}
	stream, err := c.content.Read(ctx, &contentapi.ReadContentRequest{Digest: d.String()})
	if err != nil {
		return nil, fmt.Errorf("read configuration of image %s: %w", image, err)
	}
	var data []byte
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read configuration of image %s: %w", image, err)
		}
		data = append(data, resp.Data...)
		if len(data) > maxConfigSize {
			return nil, fmt.Errorf("configuration of image %s is larger than %d bytes", image, maxConfigSize)
		}
	}
	if !verify(d, data) {
		return nil, fmt.Errorf("configuration of image %s does not match its digest", image)
	}
	return data, nil
}

func verify(d digest.Digest, data []byte) bool {
	v := d.Verifier()
	_, _ = v.Write(data)
	return v.Verified()
}

// ChainID is the chain ID of an image configuration's layers: the key of
// the committed snapshot that unpacking the image left.
func ChainID(config []byte) (digest.Digest, error) {
	var img ocispec.Image
	if err := json.Unmarshal(config, &img); err != nil {
		return "", fmt.Errorf("decode image configuration: %w", err)
	}
	if img.RootFS.Type != "layers" {
		return "", fmt.Errorf("image configuration has rootfs type %q, want layers", img.RootFS.Type)
	}
	if len(img.RootFS.DiffIDs) == 0 {
		return "", errors.New("image has no layers")
	}
	for _, d := range img.RootFS.DiffIDs {
		if err := d.Validate(); err != nil {
			return "", fmt.Errorf("layer diff ID %q: %w", d, err)
		}
	}
	return identity.ChainID(img.RootFS.DiffIDs), nil
}

// Unmount unmounts dir and removes the view key; either may be gone
// already.
func (c *Client) Unmount(ctx context.Context, key, dir string) error {
	if dir != "" {
		if err := c.unmount(dir); err != nil {
			return err
		}
	}
	_, err := c.snapshots.Remove(withNamespace(ctx), &snapshotsapi.RemoveSnapshotRequest{Snapshotter: Snapshotter, Key: key})
	if err != nil && grpcstatus.Code(err) != codes.NotFound {
		return fmt.Errorf("remove view %s: %w", key, err)
	}
	return nil
}

// List returns the image views this package made, whichever kubelet made
// them.
func (c *Client) List(ctx context.Context) ([]View, error) {
	stream, err := c.snapshots.List(withNamespace(ctx), &snapshotsapi.ListSnapshotsRequest{
		Snapshotter: Snapshotter,
		Filters:     []string{fmt.Sprintf("labels.%q", LabelPodUID)},
	})
	if err != nil {
		return nil, fmt.Errorf("list image views: %w", err)
	}
	var out []View
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list image views: %w", err)
		}
		for _, info := range resp.Info {
			if !strings.HasPrefix(info.Name, KeyPrefix) || info.Labels[LabelPodUID] == "" {
				continue
			}
			out = append(out, View{Key: info.Name, Image: info.Labels[LabelImage], Dir: info.Labels[LabelDir], PodUID: info.Labels[LabelPodUID]})
		}
	}
}

// Images returns the image IDs that views show, for image garbage
// collection to keep.
func (c *Client) Images(ctx context.Context) ([]string, error) {
	views, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(views))
	for _, v := range views {
		out = append(out, v.Image)
	}
	return out, nil
}

// IsMountPoint says whether path is a mount point: its mount differs from
// its parent's. Mount IDs, not device numbers, tell: a bind mount of a
// directory on the same file system has its parent's device.
func IsMountPoint(path string) (bool, error) {
	var st, parent unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &st); err != nil {
		return false, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	if err := unix.Statx(unix.AT_FDCWD, path+"/..", 0, unix.STATX_MNT_ID, &parent); err != nil {
		return false, &os.PathError{Op: "statx", Path: path + "/..", Err: err}
	}
	return st.Mnt_id != parent.Mnt_id, nil
}
