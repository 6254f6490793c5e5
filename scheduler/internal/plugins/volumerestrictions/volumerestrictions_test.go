package volumerestrictions

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func withVolume(p *v1.Pod, src v1.VolumeSource) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "v", VolumeSource: src})
	return p
}

func TestDiskConflicts(t *testing.T) {
	pd := func(name string, ro bool) v1.VolumeSource {
		return v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: ro}}
	}
	ebs := v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
	existing := []*v1.Pod{
		withVolume(plugintest.Pod("rw", "", "n1"), pd("disk-a", false)),
		withVolume(plugintest.Pod("ro", "", "n2"), pd("disk-b", true)),
		withVolume(plugintest.Pod("ebs", "", "n2"), ebs),
	}
	nodes := []*v1.Node{plugintest.Node("n1", "1"), plugintest.Node("n2", "1")}
	tests := []struct {
		name string
		src  v1.VolumeSource
		want map[string]bool
	}{
		{name: "same PD read-write conflicts", src: pd("disk-a", false), want: map[string]bool{"n1": false, "n2": true}},
		{name: "same PD both read-only shares", src: pd("disk-b", true), want: map[string]bool{"n2": true}},
		{name: "same PD one read-write conflicts", src: pd("disk-b", false), want: map[string]bool{"n2": false}},
		{name: "same EBS volume conflicts", src: ebs, want: map[string]bool{"n1": true, "n2": false}},
		{name: "emptyDir never conflicts", src: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, want: map[string]bool{"n1": true, "n2": true}},
	}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, existing)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pre := h.Filter(t, withVolume(plugintest.Pod("p", "", ""), tt.src))
			if pre != nil && !pre.IsSkip() {
				t.Fatalf("PreFilter: %v", pre)
			}
			for n, fits := range tt.want {
				if got[n].IsSuccess() != fits || !fits && got[n].Message() != ErrReasonDiskConflict {
					t.Errorf("node %s: %v, want fits=%v", n, got[n], fits)
				}
			}
		})
	}
}
