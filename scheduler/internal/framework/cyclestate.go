package framework

import (
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
)

// CycleState is the data plugins share during one pod's scheduling cycle;
// it implements fwk.CycleState. Plugins write it in PreFilter and PreScore
// and only read it while Filter and Score run in parallel, so it needs no
// lock.
type CycleState struct {
	data              map[fwk.StateKey]fwk.StateData
	skipFilterPlugins sets.Set[string]
	skipScorePlugins  sets.Set[string]
	skipPreBind       sets.Set[string]
	parallelPreBind   sets.Set[string]
	recordMetrics     bool
	// filters are the Filter plugins left once skipFilterPlugins is
	// taken out, worked out once per cycle rather than per node (nil:
	// not worked out).
	filters []fwk.FilterPlugin
}

var _ fwk.CycleState = &CycleState{}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{data: map[fwk.StateKey]fwk.StateData{}}
}

// SetRecordPluginMetrics samples this cycle for per-plugin metrics.
func (c *CycleState) SetRecordPluginMetrics(b bool) { c.recordMetrics = b }

// ShouldRecordPluginMetrics implements fwk.CycleState.
func (c *CycleState) ShouldRecordPluginMetrics() bool { return c.recordMetrics }

// GetSkipFilterPlugins implements fwk.CycleState.
func (c *CycleState) GetSkipFilterPlugins() sets.Set[string] { return c.skipFilterPlugins }

// SetSkipFilterPlugins implements fwk.CycleState.
func (c *CycleState) SetSkipFilterPlugins(p sets.Set[string]) {
	c.skipFilterPlugins = p
	c.filters = nil
}

// GetSkipScorePlugins implements fwk.CycleState.
func (c *CycleState) GetSkipScorePlugins() sets.Set[string] { return c.skipScorePlugins }

// SetSkipScorePlugins implements fwk.CycleState.
func (c *CycleState) SetSkipScorePlugins(p sets.Set[string]) { c.skipScorePlugins = p }

// GetSkipPreBindPlugins implements fwk.CycleState.
func (c *CycleState) GetSkipPreBindPlugins() sets.Set[string] { return c.skipPreBind }

// SetSkipPreBindPlugins implements fwk.CycleState.
func (c *CycleState) SetSkipPreBindPlugins(p sets.Set[string]) { c.skipPreBind = p }

// GetParallelPreBindPlugins implements fwk.CycleState.
func (c *CycleState) GetParallelPreBindPlugins() sets.Set[string] { return c.parallelPreBind }

// SetParallelPreBindPlugins implements fwk.CycleState.
func (c *CycleState) SetParallelPreBindPlugins(p sets.Set[string]) { c.parallelPreBind = p }

// ShouldSkipAllPostFilterPlugins implements fwk.CycleState.
func (c *CycleState) ShouldSkipAllPostFilterPlugins() bool { return false }

// Read implements fwk.CycleState.
func (c *CycleState) Read(key fwk.StateKey) (fwk.StateData, error) {
	if v, ok := c.data[key]; ok {
		return v, nil
	}
	return nil, fwk.ErrNotFound
}

// Write implements fwk.CycleState.
func (c *CycleState) Write(key fwk.StateKey, val fwk.StateData) { c.data[key] = val }

// Delete implements fwk.CycleState.
func (c *CycleState) Delete(key fwk.StateKey) { delete(c.data, key) }

// Clone implements fwk.CycleState: each datum is cloned, so that
// preemption's what-if evaluations do not disturb the cycle.
func (c *CycleState) Clone() fwk.CycleState {
	if c == nil {
		return nil
	}
	n := &CycleState{
		data:              make(map[fwk.StateKey]fwk.StateData, len(c.data)),
		skipFilterPlugins: c.skipFilterPlugins,
		skipScorePlugins:  c.skipScorePlugins,
		skipPreBind:       c.skipPreBind,
		parallelPreBind:   c.parallelPreBind,
		recordMetrics:     c.recordMetrics,
		filters:           c.filters,
	}
	for k, v := range c.data {
		n.data[k] = v.Clone()
	}
	return n
}

// IsPodGroupSchedulingCycle implements fwk.CycleState; trireme-scheduler
// schedules pods one at a time.
func (c *CycleState) IsPodGroupSchedulingCycle() bool { return false }

// GetPodGroupSchedulingCycle implements fwk.CycleState.
func (c *CycleState) GetPodGroupSchedulingCycle() fwk.PodGroupCycleState { return nil }

// GetPlacementCycleState implements fwk.CycleState.
func (c *CycleState) GetPlacementCycleState() fwk.PlacementCycleState { return nil }
