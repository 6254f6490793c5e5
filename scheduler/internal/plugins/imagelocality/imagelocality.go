// Package imagelocality is the ImageLocality plugin: nodes that already
// hold a pod's images score higher, weighted by image size and by how few
// nodes share them.
package imagelocality

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "ImageLocality"

// Upstream's bounds: images under 23MB do not count; 1000MB per container
// scores the most.
const (
	mb           int64 = 1024 * 1024
	minThreshold       = 23 * mb
	maxThreshold       = 1000 * mb
)

// Plugin implements Score.
type Plugin struct{ h fwk.Handle }

// New is the plugin's factory.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &Plugin{h: h}, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// Score implements fwk.ScorePlugin.
func (p *Plugin) Score(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	all, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	containers := len(pod.Spec.InitContainers) + len(pod.Spec.Containers)
	return calculate(sumScores(pod, ni.GetImageStates(), len(all)), containers), nil
}

// ScoreExtensions implements fwk.ScorePlugin.
func (*Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

func calculate(sum int64, containers int) int64 {
	maxT := maxThreshold * int64(containers)
	if sum < minThreshold {
		sum = minThreshold
	} else if sum > maxT {
		sum = maxT
	}
	if maxT == minThreshold {
		return 0
	}
	return fwk.MaxNodeScore * (sum - minThreshold) / (maxT - minThreshold)
}

func sumScores(pod *v1.Pod, states map[string]*fwk.ImageStateSummary, total int) int64 {
	var sum int64
	add := func(cs []v1.Container) {
		for _, c := range cs {
			if st, ok := states[Normalize(c.Image)]; ok && total > 0 {
				sum += int64(float64(st.Size) * float64(st.NumNodes) / float64(total))
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	return sum
}

// Normalize adds the ":latest" tag to an image named without tag or
// digest, as node status lists it.
func Normalize(name string) string {
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
		return name + ":latest"
	}
	return name
}
