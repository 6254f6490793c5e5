package containerstats

import (
	"errors"
	"slices"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
)

func TestList(t *testing.T) {
	gone := errors.New("container c3 not found")
	tests := []struct {
		name    string
		listErr error
		stats   []string // containers with stats; c1 and c2 run, c3 exited
		want    []string
		wantErr bool
	}{
		{name: "list answers", stats: []string{"c1", "c2", "c3"}, want: []string{"c1", "c2", "c3"}},
		{name: "list fails, each running container asked", listErr: gone, stats: []string{"c1", "c2", "c3"}, want: []string{"c1", "c2"}},
		{name: "one running container gone meanwhile", listErr: gone, stats: []string{"c2"}, want: []string{"c2"}},
		{name: "none measurable", listErr: gone, stats: nil, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := critesting.NewFakeRuntimeService()
			rs.SetFakeContainers([]*critesting.FakeContainer{
				{ContainerStatus: runtimeapi.ContainerStatus{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
				{ContainerStatus: runtimeapi.ContainerStatus{Id: "c2", State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
				{ContainerStatus: runtimeapi.ContainerStatus{Id: "c3", State: runtimeapi.ContainerState_CONTAINER_EXITED}},
			})
			var stats []*runtimeapi.ContainerStats
			for _, id := range tt.stats {
				stats = append(stats, &runtimeapi.ContainerStats{Attributes: &runtimeapi.ContainerAttributes{Id: id}})
			}
			rs.SetFakeContainerStats(stats)
			if tt.listErr != nil {
				rs.InjectError("ListContainerStats", tt.listErr)
			}
			got, err := List(t.Context(), rs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("List: %v, want error %v", err, tt.wantErr)
			}
			var ids []string
			for _, s := range got {
				ids = append(ids, s.GetAttributes().GetId())
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tt.want) {
				t.Errorf("List = %v, want %v", ids, tt.want)
			}
		})
	}
}
