package images

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestList(t *testing.T) {
	got := List("trireme.dev", "v1.37.0-x")
	want := "trireme.dev/etcd:v1.37.0-x trireme.dev/trireme-apiserver:v1.37.0-x trireme.dev/trireme-controller-manager:v1.37.0-x trireme.dev/trireme-cloud-controller-manager:v1.37.0-x trireme.dev/trireme-scheduler:v1.37.0-x trireme.dev/trireme-proxy:v1.37.0-x trireme.dev/trireme-netpol:v1.37.0-x trireme.dev/coredns:v1.37.0-x trireme.dev/metrics-server:v1.37.0-x trireme.dev/flannel:v1.37.0-x trireme.dev/pause:v1.37.0-x trireme.dev/trireme-vip:v1.37.0-x trireme.dev/trireme-dashboard:v1.37.0-x trireme.dev/local-path-provisioner:v1.37.0-x trireme.dev/busybox:v1.37.0-x trireme.dev/trireme-traefik:v1.37.0-x"
	if strings.Join(got, " ") != want {
		t.Errorf("List = %v", got)
	}
}

func TestArchives(t *testing.T) {
	dir := t.TempDir()
	if _, err := Archives(dir); err == nil || !strings.Contains(err.Error(), "make images") {
		t.Errorf("empty dir: %v", err)
	}
	for _, f := range []string{"b.tar", "a.tar", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	got, err := Archives(dir)
	if err != nil || len(got) != 2 || filepath.Base(got[0]) != "a.tar" {
		t.Errorf("Archives = %v, %v", got, err)
	}
}

// fakeImages is a CRI image service holding have, whose pulls succeed for
// the references in pullable.
type fakeImages struct {
	runtimeapi.UnimplementedImageServiceServer
	have, pullable map[string]bool
	pulls          []string
}

func (f *fakeImages) ImageStatus(_ context.Context, r *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	if f.have[r.GetImage().GetImage()] {
		return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: "sha256:1", RepoTags: []string{r.GetImage().GetImage()}}}, nil
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

func (f *fakeImages) PullImage(_ context.Context, r *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref := r.GetImage().GetImage()
	f.pulls = append(f.pulls, ref)
	if !f.pullable[ref] {
		return nil, status.Errorf(codes.Unknown, "failed to resolve reference %q: no such host", ref)
	}
	f.have[ref] = true
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:2"}, nil
}

func TestEnsure(t *testing.T) {
	tests := []struct {
		name           string
		have, pullable []string
		wantPulls      []string
		wantErr        []string
	}{
		{name: "all present", have: []string{"r/pause:v1", "r/etcd:v1"}},
		{name: "one pulled", have: []string{"r/pause:v1"}, pullable: []string{"r/etcd:v1"}, wantPulls: []string{"r/etcd:v1"}},
		{name: "none pullable", wantPulls: []string{"r/pause:v1", "r/etcd:v1"}, wantErr: []string{
			"lacks 2 image(s)", `r/pause:v1 (failed to resolve reference "r/pause:v1": no such host)`, "r/etcd:v1 (", "triremeadm images import",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeImages{have: set(tt.have), pullable: set(tt.pullable)}
			socket := filepath.Join(t.TempDir(), "cri.sock")
			l, err := net.Listen("unix", socket)
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			runtimeapi.RegisterImageServiceServer(srv, f)
			go func() { _ = srv.Serve(l) }()
			t.Cleanup(srv.Stop)

			var progress []string
			err = Ensure(context.Background(), socket, []string{"r/pause:v1", "r/etcd:v1"}, func(format string, args ...any) {
				progress = append(progress, fmt.Sprintf(format, args...))
			})
			if !slices.Equal(f.pulls, tt.wantPulls) {
				t.Errorf("pulled %v, want %v", f.pulls, tt.wantPulls)
			}
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				for _, ref := range tt.wantPulls {
					if !slices.Contains(progress, "pulled "+ref) {
						t.Errorf("progress %q does not report pulling %s", progress, ref)
					}
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func set(refs []string) map[string]bool {
	m := map[string]bool{}
	for _, r := range refs {
		m[r] = true
	}
	return m
}
