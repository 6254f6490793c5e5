// Package containerstats reads every running container's stats from the
// runtime, for /stats/summary, /metrics/resource and eviction.
package containerstats

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cri "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// List returns the stats of the runtime's containers. containerd answers
// ListContainerStats with an error when a container goes away while it
// gathers them, which on a busy node happens often enough that a scrape
// would fail for a container nobody asked about; List then asks for each
// running container on its own and leaves out those it cannot measure,
// failing only when it can measure none.
func List(ctx context.Context, rs cri.RuntimeService) ([]*runtimeapi.ContainerStats, error) {
	all, err := rs.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{})
	if err == nil || ctx.Err() != nil || status.Code(err) == codes.Unimplemented {
		return all, err
	}
	listErr := err
	running, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
	if err != nil {
		return nil, errors.Join(listErr, fmt.Errorf("list running containers: %w", err))
	}
	out := make([]*runtimeapi.ContainerStats, 0, len(running))
	var errs []error
	for _, c := range running {
		st, err := rs.ContainerStats(ctx, c.GetId())
		if err != nil {
			// Most often it stopped since it was listed.
			errs = append(errs, fmt.Errorf("container %s stats: %w", c.GetId(), err))
			continue
		}
		out = append(out, st)
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(append([]error{listErr}, errs...)...)
	}
	return out, nil
}
