package imagevolume

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	"github.com/containerd/containerd/api/types"
	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

func config(t *testing.T, typ string, diffIDs ...digest.Digest) []byte {
	t.Helper()
	b, err := json.Marshal(ocispec.Image{RootFS: ocispec.RootFS{Type: typ, DiffIDs: diffIDs}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestChainID(t *testing.T) {
	a := digest.FromString("layer a")
	b := digest.FromString("layer b")
	c := digest.FromString("layer c")
	ab := digest.FromString(a.String() + " " + b.String())
	abc := digest.FromString(ab.String() + " " + c.String())
	for _, tc := range []struct {
		name    string
		config  []byte
		want    digest.Digest
		wantErr string
	}{
		{name: "one layer is its diff ID", config: config(t, "layers", a), want: a},
		{name: "two layers", config: config(t, "layers", a, b), want: ab},
		{name: "three layers chain", config: config(t, "layers", a, b, c), want: abc},
		{name: "no layers", config: config(t, "layers"), wantErr: "no layers"},
		{name: "unknown rootfs type", config: config(t, "tarball", a), wantErr: "rootfs type"},
		{name: "bad diff ID", config: []byte(`{"rootfs":{"type":"layers","diff_ids":["sha256:xyz"]}}`), wantErr: "diff ID"},
		{name: "not JSON", config: []byte("{"), wantErr: "decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChainID(tc.config)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ChainID = %v, %v; want error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ChainID = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options []string
		flags   uintptr
		data    string
	}{
		{name: "bind view", options: []string{"ro", "rbind"}, flags: unix.MS_RDONLY | unix.MS_BIND | unix.MS_REC},
		{name: "overlay view", options: []string{"index=off", "lowerdir=/a:/b"}, flags: unix.MS_RDONLY, data: "index=off,lowerdir=/a:/b"},
		{name: "rw is overruled", options: []string{"rw", "nosuid"}, flags: unix.MS_RDONLY | unix.MS_NOSUID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, data := parseOptions(tc.options)
			if flags != tc.flags || data != tc.data {
				t.Errorf("parseOptions(%v) = %#x, %q; want %#x, %q", tc.options, flags, data, tc.flags, tc.data)
			}
		})
	}
}

// fakeContainerd serves the content and snapshots services of one
// namespace: blobs by digest, committed snapshots by name.
type fakeContainerd struct {
	snapshotsapi.UnimplementedSnapshotsServer

	mu        sync.Mutex
	blobs     map[string][]byte
	committed map[string]bool
	views     map[string]*snapshotsapi.Info
	// namespaces are the namespaces calls named.
	namespaces map[string]bool
}

func (f *fakeContainerd) ns(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range md.Get("containerd-namespace") {
		f.namespaces[n] = true
	}
}

// fakeContent is fakeContainerd's content service.
type fakeContent struct {
	contentapi.UnimplementedContentServer
	f *fakeContainerd
}

func (fc fakeContent) Read(req *contentapi.ReadContentRequest, s contentapi.Content_ReadServer) error {
	f := fc.f
	f.ns(s.Context())
	f.mu.Lock()
	b, ok := f.blobs[req.Digest]
	f.mu.Unlock()
	if !ok {
		return grpcstatus.Errorf(codes.NotFound, "content %s: not found", req.Digest)
	}
	// In two pieces, as large blobs come.
	half := len(b) / 2
	if err := s.Send(&contentapi.ReadContentResponse{Data: b[:half]}); err != nil {
		return err
	}
	return s.Send(&contentapi.ReadContentResponse{Offset: int64(half), Data: b[half:]})
}

func viewMounts(key string) []*types.Mount {
	return []*types.Mount{{Type: "bind", Source: "/snapshots/" + key, Options: []string{"ro", "rbind"}}}
}

func (f *fakeContainerd) View(ctx context.Context, req *snapshotsapi.ViewSnapshotRequest) (*snapshotsapi.ViewSnapshotResponse, error) {
	f.ns(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.Snapshotter != Snapshotter {
		return nil, grpcstatus.Errorf(codes.NotFound, "snapshotter %s", req.Snapshotter)
	}
	if !f.committed[req.Parent] {
		return nil, grpcstatus.Errorf(codes.NotFound, "parent %s: not found", req.Parent)
	}
	if f.views[req.Key] != nil {
		return nil, grpcstatus.Errorf(codes.AlreadyExists, "snapshot %s: already exists", req.Key)
	}
	f.views[req.Key] = &snapshotsapi.Info{Name: req.Key, Parent: req.Parent, Kind: snapshotsapi.Kind_VIEW, Labels: req.Labels}
	return &snapshotsapi.ViewSnapshotResponse{Mounts: viewMounts(req.Key)}, nil
}

func (f *fakeContainerd) Mounts(ctx context.Context, req *snapshotsapi.MountsRequest) (*snapshotsapi.MountsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.views[req.Key] == nil {
		return nil, grpcstatus.Errorf(codes.NotFound, "snapshot %s", req.Key)
	}
	return &snapshotsapi.MountsResponse{Mounts: viewMounts(req.Key)}, nil
}

func (f *fakeContainerd) Remove(ctx context.Context, req *snapshotsapi.RemoveSnapshotRequest) (*emptypb.Empty, error) {
	f.ns(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.views[req.Key] == nil {
		return nil, grpcstatus.Errorf(codes.NotFound, "snapshot %s", req.Key)
	}
	delete(f.views, req.Key)
	return &emptypb.Empty{}, nil
}

func (f *fakeContainerd) List(req *snapshotsapi.ListSnapshotsRequest, s snapshotsapi.Snapshots_ListServer) error {
	f.ns(s.Context())
	want := `labels."` + LabelPodUID + `"`
	if len(req.Filters) != 1 || req.Filters[0] != want {
		return grpcstatus.Errorf(codes.InvalidArgument, "filters %v, want [%s]", req.Filters, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &snapshotsapi.ListSnapshotsResponse{}
	for _, info := range f.views {
		resp.Info = append(resp.Info, info)
	}
	return s.Send(resp)
}

type mountRecorder struct {
	mounted map[string]*types.Mount
}

func (r *mountRecorder) mount(m *types.Mount, target string) error {
	r.mounted[target] = m
	return nil
}

func (r *mountRecorder) unmount(target string) error {
	delete(r.mounted, target)
	return nil
}

// start serves f on a socket and returns a client of it whose mounts r
// records.
func start(t *testing.T, f *fakeContainerd, r *mountRecorder) *Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "containerd.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	contentapi.RegisterContentServer(srv, fakeContent{f: f})
	snapshotsapi.RegisterSnapshotsServer(srv, f)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	c.mount, c.unmount = r.mount, r.unmount
	return c
}

// TestMountUnmount: a view of the image's chain ID is made, labelled as a
// GC root with its pod, directory and image, and mounted; mounting again
// after a restart reuses it; List finds it and Unmount removes it.
func TestMountUnmount(t *testing.T) {
	a, b := digest.FromString("a"), digest.FromString("b")
	cfg := config(t, "layers", a, b)
	image := digest.FromBytes(cfg)
	unpacked := digest.FromString(a.String() + " " + b.String())
	f := &fakeContainerd{
		blobs:      map[string][]byte{image.String(): cfg, digest.FromString("tampered").String(): cfg},
		committed:  map[string]bool{unpacked.String(): true},
		views:      map[string]*snapshotsapi.Info{},
		namespaces: map[string]bool{},
	}
	r := &mountRecorder{mounted: map[string]*types.Mount{}}
	c := start(t, f, r)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "vol")
	v := View{Key: Key("uid-1", "vol"), Image: image.String(), Dir: dir, PodUID: "uid-1"}

	if err := c.Mount(ctx, v); err != nil {
		t.Fatalf("Mount: %v", err)
	}
	info := f.views[v.Key]
	if info == nil || info.Parent != unpacked.String() {
		t.Fatalf("views = %v, want %s with parent %s", f.views, v.Key, unpacked)
	}
	for _, l := range []string{labelGCRoot, LabelPodUID, LabelDir, LabelImage} {
		if info.Labels[l] == "" {
			t.Errorf("view has no label %s: %v", l, info.Labels)
		}
	}
	if m := r.mounted[dir]; m == nil || m.Source != "/snapshots/"+v.Key {
		t.Errorf("mounted = %v, want the view's mount on %s", r.mounted, dir)
	}
	if !f.namespaces[Namespace] || len(f.namespaces) != 1 {
		t.Errorf("calls named namespaces %v, want only %s", f.namespaces, Namespace)
	}

	// The kubelet restarted: the view exists, its mounts are asked for.
	delete(r.mounted, dir)
	if err := c.Mount(ctx, v); err != nil {
		t.Fatalf("Mount again: %v", err)
	}
	if r.mounted[dir] == nil {
		t.Errorf("the existing view was not mounted")
	}

	views, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]View{v}, views); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := c.Unmount(ctx, v.Key, dir); err != nil {
		t.Fatalf("Unmount: %v", err)
	}
	if len(f.views) != 0 || len(r.mounted) != 0 {
		t.Errorf("after Unmount: views %v, mounts %v", f.views, r.mounted)
	}
	if err := c.Unmount(ctx, v.Key, dir); err != nil {
		t.Errorf("Unmount of what is gone: %v", err)
	}

	for _, tc := range []struct {
		name, image, want string
	}{
		{name: "not a digest", image: "busybox:latest", want: "not a digest"},
		{name: "no such image", image: digest.FromString("other").String(), want: "not found"},
		{name: "content does not match its digest", image: digest.FromString("tampered").String(), want: "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Mount(ctx, View{Key: Key("uid-2", "vol"), Image: tc.image, Dir: filepath.Join(t.TempDir(), "v"), PodUID: "uid-2"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Mount = %v, want an error containing %q", err, tc.want)
			}
		})
	}

	// An image whose layers were never unpacked has no parent snapshot.
	f.committed = map[string]bool{}
	err = c.Mount(ctx, View{Key: Key("uid-3", "vol"), Image: image.String(), Dir: filepath.Join(t.TempDir(), "v"), PodUID: "uid-3"})
	if err == nil || !strings.Contains(err.Error(), "not unpacked") {
		t.Errorf("Mount of an image not unpacked = %v", err)
	}
}
