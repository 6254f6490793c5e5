package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/api/config/kubescheduler"
	"trireme.dev/scheduler/internal/metrics"
)

// Factory builds a plugin from its (defaulted) args, or nil args when the
// plugin has no args kind.
type Factory func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error)

// Registry maps plugin names to their factories.
type Registry map[string]Factory

// Options are what a profile's framework shares with the rest of the
// scheduler.
type Options struct {
	ClientSet       clientset.Interface
	KubeConfig      *restclient.Config
	EventRecorder   events.EventRecorderLogger
	InformerFactory informers.SharedInformerFactory
	// Snapshot is updated in place at the start of each scheduling cycle.
	Snapshot    fwk.SharedLister
	Nominator   fwk.PodNominator
	Activator   fwk.PodActivator
	Parallelism int
}

// Framework runs one profile's plugins; it implements fwk.Handle.
type Framework struct {
	Options
	profileName string
	// PercentageOfNodesToScore is the profile's, or nil for the global one.
	PercentageOfNodesToScore *int32

	preEnqueue []fwk.PreEnqueuePlugin
	queueSort  fwk.QueueSortPlugin
	preFilter  []fwk.PreFilterPlugin
	filter     []fwk.FilterPlugin
	postFilter []fwk.PostFilterPlugin
	preScore   []fwk.PreScorePlugin
	score      []fwk.ScorePlugin
	weights    map[string]int64
	reserve    []fwk.ReservePlugin
	permit     []fwk.PermitPlugin
	preBind    []fwk.PreBindPlugin
	bind       []fwk.BindPlugin
	postBind   []fwk.PostBindPlugin
	// Events maps each plugin that may reject a pod to the cluster events
	// that may make the pod schedulable again.
	Events map[string][]fwk.ClusterEventWithHint
	// Skipped lists the configured upstream plugins trireme-scheduler does
	// not implement.
	Skipped []string

	waitingMu sync.RWMutex
	waiting   map[types.UID]*waitingPod

	preBindMu sync.Mutex
	inPreBind map[types.UID]*podInPreBind
}

var _ fwk.Handle = &Framework{}

// New builds profile's plugins from registry.
func New(ctx context.Context, registry Registry, profile *configv1.KubeSchedulerProfile, opts Options) (*Framework, error) {
	f := &Framework{
		Options:                  opts,
		profileName:              *profile.SchedulerName,
		PercentageOfNodesToScore: profile.PercentageOfNodesToScore,
		weights:                  map[string]int64{},
		Events:                   map[string][]fwk.ClusterEventWithHint{},
		waiting:                  map[types.UID]*waitingPod{},
		inPreBind:                map[types.UID]*podInPreBind{},
	}
	if f.Parallelism <= 0 {
		f.Parallelism = kubescheduler.DefaultParallelism
	}
	plugins := profile.Plugins
	if plugins == nil {
		plugins = &configv1.Plugins{}
	}
	b := &builder{
		f:         f,
		registry:  registry,
		args:      map[string]runtime.Object{},
		instances: map[string]fwk.Plugin{},
		multi:     plugins.MultiPoint,
	}
	for _, pc := range profile.PluginConfig {
		b.args[pc.Name] = pc.Args.Object
	}
	if err := b.assignPlugins(ctx, plugins); err != nil {
		return nil, err
	}
	b.setWeights(plugins)
	if err := b.registerEvents(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// builder is one call of New: the framework it fills in and the plugins
// made so far, so that a plugin enabled at several extension points is
// one instance.
type builder struct {
	f        *Framework
	registry Registry
	// args are each plugin's args from the profile's pluginConfig.
	args      map[string]runtime.Object
	instances map[string]fwk.Plugin
	// multi are the profile's multiPoint plugins.
	multi configv1.PluginSet
}

// instance returns plugin name, made on first use. A known upstream
// plugin trireme-scheduler does not implement is nil, and listed in
// f.Skipped, so that upstream profiles load.
func (b *builder) instance(ctx context.Context, name string) (fwk.Plugin, error) {
	f := b.f
	if p, ok := b.instances[name]; ok {
		return p, nil
	}
	factory, ok := b.registry[name]
	if !ok {
		if slices.Contains(kubescheduler.KnownPlugins, name) {
			if !slices.Contains(f.Skipped, name) {
				f.Skipped = append(f.Skipped, name)
			}
			return nil, nil
		}
		return nil, fmt.Errorf("profile %q: plugin %q does not exist", f.profileName, name)
	}
	p, err := factory(ctx, b.args[name], f)
	if err != nil {
		return nil, fmt.Errorf("profile %q: initialize plugin %q: %w", f.profileName, name, err)
	}
	b.instances[name] = p
	return p, nil
}

// point returns the plugins of one extension point: those enabled there
// explicitly first, then the multiPoint ones implementing it, minus
// those disabled there ("*" disables every multiPoint plugin).
func (b *builder) point(ctx context.Context, set configv1.PluginSet, implements func(fwk.Plugin) bool) ([]fwk.Plugin, error) {
	var out []fwk.Plugin
	seen := sets.New[string]()
	disabled := sets.New[string]()
	for _, d := range set.Disabled {
		disabled.Insert(d.Name)
	}
	for _, e := range set.Enabled {
		p, err := b.instance(ctx, e.Name)
		if err != nil {
			return nil, err
		}
		if p == nil || seen.Has(e.Name) {
			continue
		}
		if !implements(p) {
			return nil, fmt.Errorf("profile %q: plugin %q does not implement this extension point", b.f.profileName, e.Name)
		}
		seen.Insert(e.Name)
		out = append(out, p)
	}
	if disabled.Has("*") {
		return out, nil
	}
	for _, e := range b.multi.Enabled {
		if seen.Has(e.Name) || disabled.Has(e.Name) || slices.ContainsFunc(b.multi.Disabled, func(d configv1.Plugin) bool { return d.Name == e.Name }) {
			continue
		}
		p, err := b.instance(ctx, e.Name)
		if err != nil {
			return nil, err
		}
		if p == nil || !implements(p) {
			continue
		}
		seen.Insert(e.Name)
		out = append(out, p)
	}
	return out, nil
}

// collect appends to *dst the plugins of extension point set, which
// implement T. Once *err is set it does nothing, so that a list of calls
// stops at the first error.
func collect[T fwk.Plugin](ctx context.Context, b *builder, err *error, set configv1.PluginSet, dst *[]T) {
	if *err != nil {
		return
	}
	var list []fwk.Plugin
	list, *err = b.point(ctx, set, is[T])
	for _, p := range list {
		*dst = append(*dst, p.(T))
	}
}

// assignPlugins fills in every extension point, in the order a pod goes
// through them, so plugins are made in that order; a profile needs one
// queueSort plugin and a bind plugin.
func (b *builder) assignPlugins(ctx context.Context, plugins *configv1.Plugins) error {
	f := b.f
	var err error
	var sorts []fwk.QueueSortPlugin
	collect(ctx, b, &err, plugins.PreEnqueue, &f.preEnqueue)
	collect(ctx, b, &err, plugins.QueueSort, &sorts)
	collect(ctx, b, &err, plugins.PreFilter, &f.preFilter)
	collect(ctx, b, &err, plugins.Filter, &f.filter)
	collect(ctx, b, &err, plugins.PostFilter, &f.postFilter)
	collect(ctx, b, &err, plugins.PreScore, &f.preScore)
	collect(ctx, b, &err, plugins.Score, &f.score)
	collect(ctx, b, &err, plugins.Reserve, &f.reserve)
	collect(ctx, b, &err, plugins.Permit, &f.permit)
	collect(ctx, b, &err, plugins.PreBind, &f.preBind)
	collect(ctx, b, &err, plugins.Bind, &f.bind)
	collect(ctx, b, &err, plugins.PostBind, &f.postBind)
	if err != nil {
		return err
	}
	if len(sorts) != 1 {
		return fmt.Errorf("profile %q: exactly one queueSort plugin is required, have %d", f.profileName, len(sorts))
	}
	f.queueSort = sorts[0]
	if len(f.bind) == 0 {
		return fmt.Errorf("profile %q: at least one bind plugin is required", f.profileName)
	}
	return nil
}

// setWeights gives each Score plugin its weight: 1 unless the multiPoint
// or score set gives one, the score set's winning.
func (b *builder) setWeights(plugins *configv1.Plugins) {
	f := b.f
	for _, s := range f.score {
		f.weights[s.Name()] = 1
	}
	for _, set := range []configv1.PluginSet{b.multi, plugins.Score} {
		for _, e := range set.Enabled {
			if e.Weight != nil && *e.Weight > 0 {
				f.weights[e.Name] = int64(*e.Weight)
			}
		}
	}
}

// registerEvents records, for each plugin that may reject a pod, the
// cluster events that may make the pod schedulable again, so the queue
// retries the pod only on those.
func (b *builder) registerEvents(ctx context.Context) error {
	f := b.f
	for name, p := range b.instances {
		if ext, ok := p.(fwk.EnqueueExtensions); ok {
			evs, err := ext.EventsToRegister(ctx)
			if err != nil {
				return fmt.Errorf("profile %q: events of plugin %q: %w", f.profileName, name, err)
			}
			f.Events[name] = evs
		} else if rejects(p) {
			// A plugin that says nothing is retried on any event.
			f.Events[name] = []fwk.ClusterEventWithHint{{Event: fwk.ClusterEvent{Resource: fwk.WildCard, ActionType: fwk.All}}}
		}
	}
	return nil
}

func is[T any](p fwk.Plugin) bool {
	_, ok := p.(T)
	return ok
}

func rejects(p fwk.Plugin) bool {
	return is[fwk.PreEnqueuePlugin](p) || is[fwk.PreFilterPlugin](p) || is[fwk.FilterPlugin](p) || is[fwk.ReservePlugin](p) || is[fwk.PermitPlugin](p)
}

// ProfileName implements fwk.Handle.
func (f *Framework) ProfileName() string { return f.profileName }

// QueueSortLess is the profile's queue order.
func (f *Framework) QueueSortLess() fwk.LessFunc { return f.queueSort.Less }

// HasFilters reports whether any Filter plugin runs.
func (f *Framework) HasFilters() bool { return len(f.filter) > 0 }

// HasScores reports whether any Score plugin runs.
func (f *Framework) HasScores() bool { return len(f.score) > 0 }

// HasPostFilters reports whether any PostFilter plugin runs.
func (f *Framework) HasPostFilters() bool { return len(f.postFilter) > 0 }

// PluginNames lists the plugins at each extension point, for the start-up
// log.
func (f *Framework) PluginNames() map[string][]string {
	names := func(ps ...fwk.Plugin) []string {
		out := make([]string, 0, len(ps))
		for _, p := range ps {
			out = append(out, p.Name())
		}
		return out
	}
	conv := func(n int, at func(int) fwk.Plugin) []fwk.Plugin {
		out := make([]fwk.Plugin, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	return map[string][]string{
		"preEnqueue": names(conv(len(f.preEnqueue), func(i int) fwk.Plugin { return f.preEnqueue[i] })...),
		"queueSort":  {f.queueSort.Name()},
		"preFilter":  names(conv(len(f.preFilter), func(i int) fwk.Plugin { return f.preFilter[i] })...),
		"filter":     names(conv(len(f.filter), func(i int) fwk.Plugin { return f.filter[i] })...),
		"postFilter": names(conv(len(f.postFilter), func(i int) fwk.Plugin { return f.postFilter[i] })...),
		"preScore":   names(conv(len(f.preScore), func(i int) fwk.Plugin { return f.preScore[i] })...),
		"score":      names(conv(len(f.score), func(i int) fwk.Plugin { return f.score[i] })...),
		"reserve":    names(conv(len(f.reserve), func(i int) fwk.Plugin { return f.reserve[i] })...),
		"permit":     names(conv(len(f.permit), func(i int) fwk.Plugin { return f.permit[i] })...),
		"preBind":    names(conv(len(f.preBind), func(i int) fwk.Plugin { return f.preBind[i] })...),
		"bind":       names(conv(len(f.bind), func(i int) fwk.Plugin { return f.bind[i] })...),
		"postBind":   names(conv(len(f.postBind), func(i int) fwk.Plugin { return f.postBind[i] })...),
	}
}

// RunPreEnqueuePlugins runs PreEnqueue; a failure names the gating
// plugin.
func (f *Framework) RunPreEnqueuePlugins(ctx context.Context, pod *v1.Pod) *fwk.Status {
	for _, p := range f.preEnqueue {
		if s := p.PreEnqueue(ctx, pod); !s.IsSuccess() {
			s.SetPlugin(p.Name())
			return s
		}
	}
	return nil
}

// RunPreFilterPlugins runs PreFilter. It returns the merged node
// restriction, the first failure (with its plugin set) and every plugin
// that rejected the pod.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	var result *fwk.PreFilterResult
	skip := sets.New[string]()
	rejected := sets.New[string]()
	for _, p := range f.preFilter {
		t0 := f.startTimer(state)
		r, s := p.PreFilter(ctx, state, pod, nodes)
		f.observe(state, p.Name(), "PreFilter", t0, s)
		if s.IsSkip() {
			skip.Insert(p.Name())
			continue
		}
		if !s.IsSuccess() {
			s.SetPlugin(p.Name())
			if s.IsRejected() {
				rejected.Insert(p.Name())
				return nil, s, rejected
			}
			return nil, fwk.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name()), rejected
		}
		if !r.AllNodes() {
			result = result.Merge(r)
			if len(result.NodeNames) == 0 {
				rejected.Insert(p.Name())
				return result, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) ["+p.Name()+"]").WithPlugin(p.Name()), rejected
			}
		}
	}
	state.SetSkipFilterPlugins(skip)
	state.filters = make([]fwk.FilterPlugin, 0, len(f.filter))
	for _, p := range f.filter {
		if !skip.Has(p.Name()) {
			state.filters = append(state.filters, p)
		}
	}
	return result, nil, rejected
}

// RunPreFilterExtensionAddPod implements fwk.PluginsRunner.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state fwk.CycleState, pod *v1.Pod, add fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	for _, p := range f.preFilter {
		if state.GetSkipFilterPlugins().Has(p.Name()) || p.PreFilterExtensions() == nil {
			continue
		}
		if s := p.PreFilterExtensions().AddPod(ctx, state, pod, add, ni); !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", p.Name(), s.AsError()))
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod implements fwk.PluginsRunner.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state fwk.CycleState, pod *v1.Pod, remove fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	for _, p := range f.preFilter {
		if state.GetSkipFilterPlugins().Has(p.Name()) || p.PreFilterExtensions() == nil {
			continue
		}
		if s := p.PreFilterExtensions().RemovePod(ctx, state, pod, remove, ni); !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", p.Name(), s.AsError()))
		}
	}
	return nil
}

// RunFilterPlugins implements fwk.PluginsRunner: the first plugin that
// rejects the node decides its status.
func (f *Framework) RunFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	plugins := f.filter
	var skip sets.Set[string]
	if cs, ok := state.(*CycleState); ok && cs.filters != nil {
		plugins = cs.filters
	} else if state != nil {
		skip = state.GetSkipFilterPlugins()
	}
	for _, p := range plugins {
		if skip.Has(p.Name()) {
			continue
		}
		t0 := f.startTimer(state)
		s := p.Filter(ctx, state, pod, ni)
		f.observe(state, p.Name(), "Filter", t0, s)
		if !s.IsSuccess() {
			if !s.IsRejected() {
				s = fwk.AsStatus(fmt.Errorf("running %q filter plugin: %w", p.Name(), s.AsError()))
			}
			s.SetPlugin(p.Name())
			return s
		}
	}
	return nil
}

// RunFilterPluginsWithNominatedPods implements fwk.Handle: the node must
// fit the pod both with and without the higher-or-equal priority pods
// nominated to it, since those may or may not land there.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	if f.Nominator == nil {
		return f.RunFilterPlugins(ctx, state, pod, ni)
	}
	nominated := f.Nominator.NominatedPodsForNode(ni.Node().Name)
	prio := podPriority(pod)
	var with fwk.NodeInfo
	var withState fwk.CycleState
	for _, np := range nominated {
		p := np.GetPod()
		if podPriority(p) < prio || p.UID == pod.UID {
			continue
		}
		if with == nil {
			with = ni.Snapshot()
			withState = state.Clone()
		}
		with.AddPodInfo(np)
		if s := f.RunPreFilterExtensionAddPod(ctx, withState, pod, np, with); !s.IsSuccess() {
			return s
		}
	}
	if with != nil {
		if s := f.RunFilterPlugins(ctx, withState, pod, with); !s.IsSuccess() {
			return s
		}
	}
	return f.RunFilterPlugins(ctx, state, pod, ni)
}

func podPriority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// RunPostFilterPlugins runs PostFilter until one succeeds.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	var reasons []string
	var result *fwk.PostFilterResult
	for _, p := range f.postFilter {
		r, s := p.PostFilter(ctx, state, pod, m)
		if s.IsSuccess() {
			return r, s
		}
		if s.Code() == fwk.UnschedulableAndUnresolvable {
			return r, s.WithPlugin(p.Name())
		}
		if !s.IsRejected() {
			return nil, fwk.AsStatus(s.AsError()).WithPlugin(p.Name())
		}
		if r != nil && r.Mode() != fwk.ModeNoop {
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
	}
	return result, fwk.NewStatus(fwk.Unschedulable, reasons...)
}

// RunPreScorePlugins implements fwk.PluginsRunner.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	skip := sets.New[string]()
	for _, p := range f.preScore {
		t0 := f.startTimer(state)
		s := p.PreScore(ctx, state, pod, nodes)
		f.observe(state, p.Name(), "PreScore", t0, s)
		if s.IsSkip() {
			skip.Insert(p.Name())
			continue
		}
		if !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", p.Name(), s.AsError()))
		}
	}
	state.SetSkipScorePlugins(skip)
	return nil
}

// RunScorePlugins implements fwk.PluginsRunner: every plugin scores every
// node in parallel, normalizes, and its weight multiplies the result.
func (f *Framework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	all := make([]fwk.NodePluginScores, len(nodes))
	var plugins []fwk.ScorePlugin
	skip := state.GetSkipScorePlugins()
	for _, p := range f.score {
		if !skip.Has(p.Name()) {
			plugins = append(plugins, p)
		}
	}
	if len(plugins) == 0 {
		for i, n := range nodes {
			all[i] = fwk.NodePluginScores{Name: n.Node().Name}
		}
		return all, nil
	}
	// One backing array per result kind rather than a slice per node and
	// plugin: a cycle scores hundreds of nodes.
	scores := make([]fwk.NodeScoreList, len(plugins))
	scoreBacking := make(fwk.NodeScoreList, len(plugins)*len(nodes))
	for i := range scores {
		scores[i] = scoreBacking[i*len(nodes) : (i+1)*len(nodes) : (i+1)*len(nodes)]
	}
	perNode := make([]fwk.PluginScore, len(nodes)*len(plugins))
	for i := range all {
		all[i].Scores = perNode[i*len(plugins) : i*len(plugins) : (i+1)*len(plugins)]
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var errMu sync.Mutex
	var firstErr *fwk.Status
	f.Parallelizer().Until(ctx, len(nodes), func(i int) {
		for j, p := range plugins {
			t0 := f.startTimer(state)
			s, st := p.Score(ctx, state, pod, nodes[i])
			f.observe(state, p.Name(), "Score", t0, st)
			if !st.IsSuccess() {
				errMu.Lock()
				if firstErr == nil {
					firstErr = fwk.AsStatus(fmt.Errorf("running Score plugin %q: %w", p.Name(), st.AsError()))
				}
				errMu.Unlock()
				cancel()
				return
			}
			scores[j][i] = fwk.NodeScore{Name: nodes[i].Node().Name, Score: s}
		}
	}, "Score")
	if firstErr != nil {
		return nil, firstErr
	}
	for j, p := range plugins {
		if ext := p.ScoreExtensions(); ext != nil {
			if st := ext.NormalizeScore(ctx, state, pod, scores[j]); !st.IsSuccess() {
				return nil, fwk.AsStatus(fmt.Errorf("running Normalize on Score plugin %q: %w", p.Name(), st.AsError()))
			}
		}
		w := f.weights[p.Name()]
		for i := range scores[j] {
			s := scores[j][i].Score
			if s < fwk.MinScore || s > fwk.MaxScore {
				return nil, fwk.AsStatus(fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", p.Name(), s, fwk.MinScore, fwk.MaxScore))
			}
			all[i].Name = scores[j][i].Name
			all[i].Scores = append(all[i].Scores, fwk.PluginScore{Name: p.Name(), Score: s * w})
			all[i].TotalScore += s * w
		}
	}
	return all, nil
}

// RunReservePluginsReserve implements fwk.PluginsRunner.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	for _, p := range f.reserve {
		t0 := f.startTimer(state)
		s := p.Reserve(ctx, state, pod, node)
		f.observe(state, p.Name(), "Reserve", t0, s)
		if !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(p.Name())
			}
			return fwk.AsStatus(fmt.Errorf("running Reserve plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve implements fwk.PluginsRunner, in reverse
// order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, node)
	}
}

// RunPermitPlugins runs Permit. A Wait status parks the pod until every
// waiting plugin allows it, one rejects it, or the shortest timeout passes;
// WaitOnPermit then blocks the binding cycle on that outcome.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, node string) *fwk.Status {
	waits := map[string]time.Duration{}
	for _, p := range f.permit {
		t0 := f.startTimer(state)
		s, timeout := p.Permit(ctx, state, pod, node)
		f.observe(state, p.Name(), "Permit", t0, s)
		if s.IsSuccess() {
			continue
		}
		if s.IsRejected() {
			return s.WithPlugin(p.Name())
		}
		if s.IsWait() {
			waits[p.Name()] = min(timeout, 15*time.Minute)
			continue
		}
		return fwk.AsStatus(fmt.Errorf("running Permit plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
	}
	if len(waits) > 0 {
		wp := newWaitingPod(pod, waits)
		f.waitingMu.Lock()
		f.waiting[pod.UID] = wp
		f.waitingMu.Unlock()
		return fwk.NewStatus(fwk.Wait, "one or more plugins asked to wait")
	}
	return nil
}

// WaitOnPermit blocks until a waiting pod is allowed or rejected.
func (f *Framework) WaitOnPermit(ctx context.Context, pod *v1.Pod) *fwk.Status {
	f.waitingMu.RLock()
	wp := f.waiting[pod.UID]
	f.waitingMu.RUnlock()
	if wp == nil {
		return nil
	}
	defer func() {
		f.waitingMu.Lock()
		delete(f.waiting, pod.UID)
		f.waitingMu.Unlock()
	}()
	select {
	case s := <-wp.done:
		return s
	case <-ctx.Done():
		return fwk.AsStatus(ctx.Err())
	}
}

// RunPreBindPlugins runs PreBind.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, node string) *fwk.Status {
	for _, p := range f.preBind {
		if state.GetSkipPreBindPlugins().Has(p.Name()) {
			continue
		}
		t0 := f.startTimer(state)
		s := p.PreBind(ctx, state, pod, node)
		f.observe(state, p.Name(), "PreBind", t0, s)
		if !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(p.Name())
			}
			return fwk.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunBindPlugins runs Bind until a plugin does not skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, node string) *fwk.Status {
	for _, p := range f.bind {
		t0 := f.startTimer(state)
		s := p.Bind(ctx, state, pod, node)
		f.observe(state, p.Name(), "Bind", t0, s)
		if s.IsSkip() {
			continue
		}
		if !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running Bind plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
		return nil
	}
	return fwk.NewStatus(fwk.Skip, "every bind plugin skipped the pod")
}

// RunPostBindPlugins runs PostBind.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, node string) {
	for _, p := range f.postBind {
		p.PostBind(ctx, state, pod, node)
	}
}

// AddNominatedPod implements fwk.PodNominator.
func (f *Framework) AddNominatedPod(logger klog.Logger, pod fwk.PodInfo, ni *fwk.NominatingInfo) {
	f.Nominator.AddNominatedPod(logger, pod, ni)
}

// DeleteNominatedPodIfExists implements fwk.PodNominator.
func (f *Framework) DeleteNominatedPodIfExists(pod *v1.Pod) {
	f.Nominator.DeleteNominatedPodIfExists(pod)
}

// UpdateNominatedPod implements fwk.PodNominator.
func (f *Framework) UpdateNominatedPod(logger klog.Logger, old *v1.Pod, n fwk.PodInfo) {
	f.Nominator.UpdateNominatedPod(logger, old, n)
}

// NominatedPodsForNode implements fwk.PodNominator.
func (f *Framework) NominatedPodsForNode(node string) []fwk.PodInfo {
	if f.Nominator == nil {
		return nil
	}
	return f.Nominator.NominatedPodsForNode(node)
}

// Activate implements fwk.PodActivator.
func (f *Framework) Activate(logger klog.Logger, pods map[string]*v1.Pod) {
	if f.Activator != nil {
		f.Activator.Activate(logger, pods)
	}
}

// SnapshotSharedLister implements fwk.Handle.
func (f *Framework) SnapshotSharedLister() fwk.SharedLister { return f.Snapshot }

// MutableSnapshotSharedLister implements fwk.Handle; only pod-group
// scheduling, which trireme-scheduler does not do, uses it.
func (f *Framework) MutableSnapshotSharedLister() fwk.MutableSnapshotSharedLister { return nil }

// IterateOverWaitingPods implements fwk.Handle.
func (f *Framework) IterateOverWaitingPods(cb func(fwk.WaitingPod)) {
	f.waitingMu.RLock()
	defer f.waitingMu.RUnlock()
	for _, wp := range f.waiting {
		cb(wp)
	}
}

// GetWaitingPod implements fwk.Handle.
func (f *Framework) GetWaitingPod(uid types.UID) fwk.WaitingPod {
	f.waitingMu.RLock()
	defer f.waitingMu.RUnlock()
	if wp, ok := f.waiting[uid]; ok {
		return wp
	}
	return nil
}

// RejectWaitingPod implements fwk.Handle.
func (f *Framework) RejectWaitingPod(uid types.UID) bool {
	f.waitingMu.RLock()
	wp := f.waiting[uid]
	f.waitingMu.RUnlock()
	if wp != nil {
		return wp.Reject("", "removed")
	}
	return false
}

// AddPodInPreBind implements fwk.Handle: the binding cycle registers the
// cancel function of its context, so that deleting the pod ends a PreBind
// that waits (VolumeBinding waiting for the binder, say).
func (f *Framework) AddPodInPreBind(uid types.UID, cancel context.CancelCauseFunc) {
	f.preBindMu.Lock()
	defer f.preBindMu.Unlock()
	f.inPreBind[uid] = &podInPreBind{cancel: cancel}
}

// GetPodInPreBind implements fwk.Handle.
func (f *Framework) GetPodInPreBind(uid types.UID) fwk.PodInPreBind {
	f.preBindMu.Lock()
	defer f.preBindMu.Unlock()
	if p, ok := f.inPreBind[uid]; ok {
		return p
	}
	return nil
}

// RemovePodInPreBind implements fwk.Handle.
func (f *Framework) RemovePodInPreBind(uid types.UID) {
	f.preBindMu.Lock()
	defer f.preBindMu.Unlock()
	delete(f.inPreBind, uid)
}

// podInPreBind is a binding cycle that may still be cancelled: until it is
// marked prebound (about to Bind), CancelPod ends its context.
type podInPreBind struct {
	mu        sync.Mutex
	cancel    context.CancelCauseFunc
	prebound  bool
	cancelled bool
}

// CancelPod implements fwk.PodInPreBind.
func (p *podInPreBind) CancelPod(reason string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prebound {
		return false
	}
	p.cancelled = true
	p.cancel(errors.New(reason))
	return true
}

// MarkPrebound implements fwk.PodInPreBind.
func (p *podInPreBind) MarkPrebound() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancelled {
		return false
	}
	p.prebound = true
	return true
}

// ClientSet implements fwk.Handle.
func (f *Framework) ClientSet() clientset.Interface { return f.Options.ClientSet }

// KubeConfig implements fwk.Handle.
func (f *Framework) KubeConfig() *restclient.Config { return f.Options.KubeConfig }

// EventRecorder implements fwk.Handle.
func (f *Framework) EventRecorder() events.EventRecorderLogger { return f.Options.EventRecorder }

// SharedInformerFactory implements fwk.Handle.
func (f *Framework) SharedInformerFactory() informers.SharedInformerFactory {
	return f.Options.InformerFactory
}

// SharedDRAManager implements fwk.Handle. Dynamic resource allocation is
// not implemented: the DynamicResources plugin is not registered, so no
// plugin asks.
func (f *Framework) SharedDRAManager() fwk.SharedDRAManager { return nil }

// SharedCSIManager implements fwk.Handle; nil: our NodeVolumeLimits reads
// CSINode objects through its own listers, and a plugin built for
// upstream's framework that needs the CSI manager gets nil.
func (f *Framework) SharedCSIManager() fwk.CSIManager { return nil }

// Extenders implements fwk.Handle; extenders are not supported.
func (f *Framework) Extenders() []fwk.Extender { return nil }

// Parallelizer implements fwk.Handle.
func (f *Framework) Parallelizer() fwk.Parallelizer { return parallelizer(f.Parallelism) }

// APIDispatcher implements fwk.Handle; nil, as upstream with the
// SchedulerAsyncAPICalls gate off.
func (f *Framework) APIDispatcher() fwk.APIDispatcher { return nil }

// APICacher implements fwk.Handle; nil, as upstream with the
// SchedulerAsyncAPICalls gate off.
func (f *Framework) APICacher() fwk.APICacher { return nil }

// PodGroupManager implements fwk.Handle; pod groups (gang scheduling) are
// not implemented.
func (f *Framework) PodGroupManager() fwk.PodGroupManager { return nil }

// SignPod implements fwk.Handle; opportunistic batching is not
// implemented, so no pod is signed.
func (f *Framework) SignPod(context.Context, *v1.Pod) fwk.PodSignature { return nil }

// parallelizer runs work pieces on up to n goroutines.
type parallelizer int

// Until implements fwk.Parallelizer.
func (p parallelizer) Until(ctx context.Context, pieces int, work workqueue.DoWorkPieceFunc, _ string) {
	workers := int(p)
	if pieces < 2*workers {
		// Small jobs run inline: goroutines would cost more than they save.
		workers = min(workers, (pieces+31)/32)
	}
	if workers <= 1 {
		for i := 0; i < pieces; i++ {
			if ctx.Err() != nil {
				return
			}
			work(i)
		}
		return
	}
	workqueue.ParallelizeUntil(ctx, workers, pieces, work, workqueue.WithChunkSize(chunkSize(pieces, workers)))
}

func chunkSize(pieces, workers int) int {
	s := pieces / (workers * 4)
	return max(1, min(s, 64))
}

// waitingPod is a pod held at Permit.
type waitingPod struct {
	pod     *v1.Pod
	mu      sync.Mutex
	pending map[string]*time.Timer
	done    chan *fwk.Status
}

func newWaitingPod(pod *v1.Pod, waits map[string]time.Duration) *waitingPod {
	wp := &waitingPod{pod: pod, pending: map[string]*time.Timer{}, done: make(chan *fwk.Status, 1)}
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for name, d := range waits {
		wp.pending[name] = time.AfterFunc(d, func() {
			wp.Reject(name, "rejected due to timeout after waiting "+d.String()+" at plugin "+name)
		})
	}
	return wp
}

// GetPod implements fwk.WaitingPod.
func (w *waitingPod) GetPod() *v1.Pod { return w.pod }

// GetPendingPlugins implements fwk.WaitingPod.
func (w *waitingPod) GetPendingPlugins() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for n := range w.pending {
		out = append(out, n)
	}
	return out
}

// Allow implements fwk.WaitingPod.
func (w *waitingPod) Allow(plugin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.pending[plugin]; ok {
		t.Stop()
		delete(w.pending, plugin)
	}
	if len(w.pending) == 0 {
		select {
		case w.done <- nil:
		default:
		}
	}
}

// Reject implements fwk.WaitingPod.
func (w *waitingPod) Reject(plugin, msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.pending {
		t.Stop()
	}
	select {
	case w.done <- fwk.NewStatus(fwk.Unschedulable, msg).WithPlugin(plugin):
		return true
	default:
		return false
	}
}

// Preempt implements fwk.WaitingPod.
func (w *waitingPod) Preempt(plugin, msg string) bool { return w.Reject(plugin, msg) }

// ErrNoNodes is the error of a cycle with no node at all, upstream's
// wording.
var ErrNoNodes = errors.New("no nodes available to schedule pods")

// startTimer returns now when the cycle samples per-plugin metrics, and
// the zero time otherwise (so unsampled cycles pay no clock reads).
func (f *Framework) startTimer(state fwk.CycleState) time.Time {
	if state == nil || !state.ShouldRecordPluginMetrics() {
		return time.Time{}
	}
	return time.Now()
}

// observe records one plugin call of a sampled cycle.
func (f *Framework) observe(_ fwk.CycleState, plugin, point string, start time.Time, st *fwk.Status) {
	if start.IsZero() {
		return
	}
	metrics.PluginExecutionDuration.WithLabelValues(plugin, point, st.Code().String()).Observe(time.Since(start).Seconds())
}
