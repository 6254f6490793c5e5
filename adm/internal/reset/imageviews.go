package reset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// imageViewLabel marks the view snapshots of the kubelet's image volumes
// (the kubelet's imagevolume.LabelPodUID); they are containerd GC roots,
// so without the kubelet to tear them down they would pin their images'
// layers in containerd's root, which reset keeps.
const imageViewLabel = "trireme.dev/image-volume.pod-uid"

// RemoveImageViews removes the image volumes' view snapshots from the
// containerd at socket (namespace k8s.io, overlayfs), once the kubelet
// is stopped and their mounts are gone. It returns how many it removed;
// a socket nobody serves is no error.
func RemoveImageViews(ctx context.Context, socket string) (int, error) {
	if c, err := net.DialTimeout("unix", socket, time.Second); err != nil {
		return 0, nil
	} else {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", socket, err)
	}
	defer conn.Close()
	ctx = metadata.AppendToOutgoingContext(ctx, "containerd-namespace", "k8s.io")
	snapshots := snapshotsapi.NewSnapshotsClient(conn)
	stream, err := snapshots.List(ctx, &snapshotsapi.ListSnapshotsRequest{
		Snapshotter: "overlayfs", Filters: []string{fmt.Sprintf("labels.%q", imageViewLabel)},
	})
	if err != nil {
		return 0, fmt.Errorf("list image volume views: %w", err)
	}
	var keys []string
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("list image volume views: %w", err)
		}
		for _, info := range resp.Info {
			keys = append(keys, info.Name)
		}
	}
	var errs []error
	n := 0
	for _, k := range keys {
		_, err := snapshots.Remove(ctx, &snapshotsapi.RemoveSnapshotRequest{Snapshotter: "overlayfs", Key: k})
		if err != nil && grpcstatus.Code(err) != codes.NotFound {
			errs = append(errs, fmt.Errorf("remove image volume view %s: %w", k, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
