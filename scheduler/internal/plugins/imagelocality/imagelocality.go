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

// Plugin implements PreScore and Score.
type Plugin struct{ h fwk.Handle }

// New is the plugin's factory.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &Plugin{h: h}, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// preScoreKey holds the pod's normalized image names and the node count.
const preScoreKey fwk.StateKey = "PreScore" + Name

type preScoreState struct {
	images     []string
	total      int
	containers int
}

func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore implements fwk.PreScorePlugin: it names the pod's images once
// per cycle rather than once per node scored.
func (p *Plugin) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	st, err := p.prepare(pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	state.Write(preScoreKey, st)
	return nil
}

func (p *Plugin) prepare(pod *v1.Pod) (*preScoreState, error) {
	all, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, err
	}
	st := &preScoreState{total: len(all), containers: len(pod.Spec.InitContainers) + len(pod.Spec.Containers)}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			st.images = append(st.images, Normalize(c.Image))
		}
	}
	return st, nil
}

// Score implements fwk.ScorePlugin.
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	var st *preScoreState
	if d, err := state.Read(preScoreKey); err == nil {
		st = d.(*preScoreState)
	} else if st, err = p.prepare(pod); err != nil {
		return 0, fwk.AsStatus(err)
	}
	return calculate(sumScores(st.images, ni.GetImageStates(), st.total), st.containers), nil
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
	return fwk.MaxScore * (sum - minThreshold) / (maxT - minThreshold)
}

func sumScores(images []string, states map[string]*fwk.ImageStateSummary, total int) int64 {
	var sum int64
	for _, image := range images {
		if st, ok := states[image]; ok && total > 0 {
			sum += int64(float64(st.Size) * float64(st.NumNodes) / float64(total))
		}
	}
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
