package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	schedcache "trireme.dev/scheduler/internal/cache"
	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/metrics"
	"trireme.dev/scheduler/internal/queue"
)

// Upstream's bounds on how many feasible nodes a cycle looks for.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// pluginMetricsSamplePercent is the share of cycles whose plugins are
// timed one by one (upstream's value).
const pluginMetricsSamplePercent = 10

// Scheduler places pending pods on nodes.
type Scheduler struct {
	client    clientset.Interface
	Cache     *schedcache.Cache
	Queue     *queue.Queue
	Profiles  map[string]*framework.Framework
	snapshot  *schedcache.Snapshot
	informers informers.SharedInformerFactory
	podLister corelisters.PodLister
	percent   int32
	// nextStart rotates the node a cycle starts filtering at, so that
	// cycles that stop early still consider every node in turn.
	nextStart int
	// filterStatuses is findFeasible's per-node scratch, kept between cycles
	// (which run one at a time) rather than allocated for every node of
	// the cluster in every cycle.
	filterStatuses []*fwk.Status
	broadcaster    events.EventBroadcaster
	bindings       sync.WaitGroup
	// statuses writes failed pods' conditions; nil (in tests) writes
	// them in the cycle.
	statuses *statusWriter
}

// New builds the scheduler: one framework per profile, the queue, the
// cache, and informer event handlers feeding them.
func New(ctx context.Context, client clientset.Interface, kubeConfig *restclient.Config, factory informers.SharedInformerFactory, cfg *configv1.KubeSchedulerConfiguration, registry framework.Registry) (*Scheduler, error) {
	log := klog.FromContext(ctx)
	s := &Scheduler{
		client:    client,
		Cache:     schedcache.New(),
		Profiles:  map[string]*framework.Framework{},
		snapshot:  &schedcache.Snapshot{},
		informers: factory,
		podLister: factory.Core().V1().Pods().Lister(),
		percent:   *cfg.PercentageOfNodesToScore,
	}
	s.broadcaster = events.NewBroadcaster(newBoundedSink(&events.EventSinkImpl{Interface: client.EventsV1()}, eventWriters))
	var activator lazyActivator
	nominator := queue.NewNominator()
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		f, err := framework.New(ctx, registry, prof, framework.Options{
			ClientSet:       client,
			KubeConfig:      kubeConfig,
			EventRecorder:   s.broadcaster.NewRecorder(scheme.Scheme, *prof.SchedulerName),
			InformerFactory: factory,
			Snapshot:        s.snapshot,
			Nominator:       nominator,
			Activator:       &activator,
			Parallelism:     int(*cfg.Parallelism),
		})
		if err != nil {
			return nil, err
		}
		if len(f.Skipped) > 0 {
			log.Info("Profile names upstream plugins trireme-scheduler does not implement; they are left out", "profile", *prof.SchedulerName, "plugins", f.Skipped)
		}
		log.V(2).Info("Built profile", "profile", *prof.SchedulerName, "plugins", f.PluginNames())
		s.Profiles[*prof.SchedulerName] = f
	}
	events := map[string][]fwk.ClusterEventWithHint{}
	var less fwk.LessFunc
	for _, f := range s.Profiles {
		if less == nil {
			less = f.QueueSortLess()
		}
		for name, evs := range f.Events {
			events[name] = evs
		}
	}
	s.Queue = queue.New(queue.Options{
		Less:           less,
		InitialBackoff: time.Duration(*cfg.PodInitialBackoffSeconds) * time.Second,
		MaxBackoff:     time.Duration(*cfg.PodMaxBackoffSeconds) * time.Second,
		PreEnqueue: func(ctx context.Context, pod *v1.Pod) *fwk.Status {
			if f := s.Profiles[pod.Spec.SchedulerName]; f != nil {
				return f.RunPreEnqueuePlugins(ctx, pod)
			}
			return nil
		},
		Events: events,
	})
	s.Queue.Nominator = nominator
	activator.q = s.Queue
	metrics.RegisterQueue(s.Queue.Lengths)
	if err := s.addEventHandlers(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// lazyActivator lets the frameworks, built before the queue, reach it.
type lazyActivator struct{ q *queue.Queue }

func (a *lazyActivator) Activate(logger klog.Logger, pods map[string]*v1.Pod) {
	if a.q != nil {
		a.q.Activate(logger, pods)
	}
}

// Run schedules pods until ctx ends, then waits for bindings in flight.
func (s *Scheduler) Run(ctx context.Context) {
	s.broadcaster.StartRecordingToSink(ctx.Done())
	defer s.broadcaster.Shutdown()
	go s.Queue.Run(ctx)
	s.statuses = newStatusWriter(ctx, s.client)
	for ctx.Err() == nil {
		s.ScheduleOne(ctx)
	}
	s.bindings.Wait()
	s.statuses.wait()
}

// ScheduleOne runs one scheduling cycle and starts its binding cycle.
func (s *Scheduler) ScheduleOne(ctx context.Context) {
	log := klog.FromContext(ctx)
	qpi, err := s.Queue.Pop(ctx)
	if err != nil {
		return
	}
	pod := qpi.Pod
	f := s.Profiles[pod.Spec.SchedulerName]
	if f == nil || pod.DeletionTimestamp != nil || s.Cache.IsAssumed(pod) {
		s.Queue.Done(pod.UID)
		return
	}
	cycle := s.Queue.Cycle()
	start := time.Now()
	state := framework.NewCycleState()
	// As upstream, one cycle in ten times its plugins one by one.
	state.SetRecordPluginMetrics(rand.IntN(100) < pluginMetricsSamplePercent)
	s.Cache.UpdateSnapshot(s.snapshot)

	host, err := s.schedulePod(ctx, f, state, pod)
	if err != nil {
		var nominating *fwk.NominatingInfo
		var fitErr *framework.FitError
		result := metrics.Error
		if errors.As(err, &fitErr) {
			result = metrics.Unschedulable
			if f.HasPostFilters() {
				metrics.PreemptionAttempts.Inc()
				pfStart := time.Now()
				r, st := f.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
				metrics.ExtensionPointDuration.WithLabelValues("PostFilter", f.ProfileName()).Observe(time.Since(pfStart).Seconds())
				if st.Code() == fwk.Error {
					log.Error(st.AsError(), "Preemption failed", "pod", klog.KObj(pod))
				} else {
					fitErr.Diagnosis.PostFilterMsg = st.Message()
				}
				if r != nil {
					nominating = r.NominatingInfo
				}
			}
		}
		metrics.ScheduleAttempts.WithLabelValues(result, f.ProfileName()).Inc()
		metrics.AttemptDuration.WithLabelValues(result, f.ProfileName()).Observe(time.Since(start).Seconds())
		s.fail(ctx, f, qpi, err, nominating, cycle)
		return
	}

	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = host
	if err := s.Cache.AssumePod(assumed); err != nil {
		s.fail(ctx, f, qpi, fmt.Errorf("assume pod: %w", err), clearNomination, cycle)
		return
	}
	if st := f.RunReservePluginsReserve(ctx, state, assumed, host); !st.IsSuccess() {
		f.RunReservePluginsUnreserve(ctx, state, assumed, host)
		s.forget(ctx, assumed)
		s.fail(ctx, f, qpi, statusErr(st, qpi), clearNomination, cycle)
		return
	}
	if st := f.RunPermitPlugins(ctx, state, assumed, host); !st.IsSuccess() && !st.IsWait() {
		f.RunReservePluginsUnreserve(ctx, state, assumed, host)
		s.forget(ctx, assumed)
		s.fail(ctx, f, qpi, statusErr(st, qpi), clearNomination, cycle)
		return
	}
	metrics.ScheduleAttempts.WithLabelValues(metrics.Scheduled, f.ProfileName()).Inc()
	metrics.AttemptDuration.WithLabelValues(metrics.Scheduled, f.ProfileName()).Observe(time.Since(start).Seconds())
	// A nominated pod that found its node no longer holds a nomination.
	s.Queue.DeleteNominatedPodIfExists(pod)
	s.Queue.Done(pod.UID)

	s.bindings.Add(1)
	go func() {
		defer s.bindings.Done()
		s.bind(ctx, f, state, qpi, assumed, host, cycle)
	}()
}

var clearNomination = &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride}

// statusErr turns a Reserve or Permit rejection into a FitError naming
// the plugin, so the pod waits for that plugin's events.
func statusErr(st *fwk.Status, qpi *framework.QueuedPodInfo) error {
	if st.IsRejected() {
		m := framework.NewNodeToStatus()
		return &framework.FitError{NumAllNodes: 1, Diagnosis: framework.Diagnosis{
			NodeToStatus: m, UnschedulablePlugins: sets.New(st.Plugin()), PreFilterMsg: st.Message(),
		}}
	}
	return st.AsError()
}

func (s *Scheduler) forget(ctx context.Context, pod *v1.Pod) {
	if err := s.Cache.ForgetPod(pod); err != nil {
		klog.FromContext(ctx).Error(err, "Forget assumed pod", "pod", klog.KObj(pod))
	}
}

// bind runs the binding cycle: wait at Permit, PreBind, Bind, PostBind. A
// failure forgets the assumed pod and requeues it.
func (s *Scheduler) bind(ctx context.Context, f *framework.Framework, state *framework.CycleState, qpi *framework.QueuedPodInfo, assumed *v1.Pod, host string, cycle int64) {
	start := time.Now()
	// Deleting the pod cancels PreBind (see podDeleted) until the cycle
	// is marked prebound, just before Bind.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	f.AddPodInPreBind(assumed.UID, cancel)
	defer f.RemovePodInPreBind(assumed.UID)
	st := f.WaitOnPermit(ctx, assumed)
	if st.IsSuccess() {
		st = f.RunPreBindPlugins(ctx, state, assumed, host)
	}
	if st.IsSuccess() {
		if p := f.GetPodInPreBind(assumed.UID); p != nil && !p.MarkPrebound() {
			st = fwk.AsStatus(fmt.Errorf("binding cycle cancelled: %w", context.Cause(ctx)))
		}
	}
	if st.IsSuccess() {
		st = f.RunBindPlugins(ctx, state, assumed, host)
	}
	metrics.BindingDuration.Observe(time.Since(start).Seconds())
	if !st.IsSuccess() && !s.Cache.IsAssumed(assumed) && s.boundTo(assumed) == host {
		// The request failed (a timeout) but the binding landed: the
		// informer has already confirmed the pod on its node.
		st = nil
	}
	if !st.IsSuccess() && st.Code() == fwk.Error && uncertain(st.AsError()) && s.boundLive(ctx, assumed) == host {
		// The same, before the informer heard of it (or a retried request
		// found its own first attempt's binding and reported a conflict):
		// forgetting the pod now would offer its node's room to the next
		// pods meanwhile.
		st = nil
	}
	if !st.IsSuccess() {
		f.RunReservePluginsUnreserve(ctx, state, assumed, host)
		s.forget(ctx, assumed)
		// The room this pod took is free again: others may fit now.
		s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete, CustomLabel: "AssignedPodDelete"}, assumed, nil)
		if st.Code() == fwk.Error && apierrors.IsNotFound(st.AsError()) {
			return
		}
		if cur, err := s.podLister.Pods(assumed.Namespace).Get(assumed.Name); apierrors.IsNotFound(err) || (err == nil && cur.UID != assumed.UID) {
			klog.FromContext(ctx).V(2).Info("Binding cycle ended: pod deleted", "status", st, "pod", klog.KObj(assumed))
			return
		}
		s.fail(ctx, f, qpi, statusErr(st, qpi), clearNomination, cycle)
		return
	}
	if qpi.InitialAttemptTimestamp != nil {
		metrics.E2EDuration.WithLabelValues(f.ProfileName()).Observe(time.Since(*qpi.InitialAttemptTimestamp).Seconds())
	}
	f.EventRecorder().Eventf(assumed, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v", assumed.Namespace, assumed.Name, host)
	f.RunPostBindPlugins(ctx, state, assumed, host)
}

// boundTo returns the node the informer has the pod bound to, if any.
func (s *Scheduler) boundTo(pod *v1.Pod) string {
	cur, err := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	if err != nil || cur.UID != pod.UID {
		return ""
	}
	return cur.Spec.NodeName
}

// uncertain reports whether a failed binding may have landed all the
// same: a timeout or a server error, or a conflict — which a client retry
// (after a 429 or a lost response) meets when its first attempt bound
// the pod.
func uncertain(err error) bool {
	return !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) &&
		!apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err) &&
		!errors.Is(err, context.Canceled)
}

// boundLive asks the apiserver which node pod is bound to, if any: only
// after a binding request whose outcome is unknown.
func (s *Scheduler) boundLive(ctx context.Context, pod *v1.Pod) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cur, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil || cur.UID != pod.UID {
		return ""
	}
	return cur.Spec.NodeName
}

// schedulePod finds the best node for pod.
func (s *Scheduler) schedulePod(ctx context.Context, f *framework.Framework, state *framework.CycleState, pod *v1.Pod) (string, error) {
	all, _ := s.snapshot.NodeInfos().List()
	if len(all) == 0 {
		return "", framework.ErrNoNodes
	}
	feasible, diagnosis, err := s.findFeasible(ctx, f, state, pod, all)
	if err != nil {
		return "", err
	}
	if len(feasible) == 0 {
		return "", &framework.FitError{NumAllNodes: len(all), Diagnosis: diagnosis}
	}
	if len(feasible) == 1 || !f.HasScores() {
		return feasible[0].Node().Name, nil
	}
	t := time.Now()
	if st := f.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return "", st.AsError()
	}
	metrics.ExtensionPointDuration.WithLabelValues("PreScore", f.ProfileName()).Observe(time.Since(t).Seconds())
	t = time.Now()
	scores, st := f.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return "", st.AsError()
	}
	metrics.ExtensionPointDuration.WithLabelValues("Score", f.ProfileName()).Observe(time.Since(t).Seconds())
	return selectHost(scores), nil
}

// selectHost picks the highest total score, breaking ties uniformly at
// random (reservoir sampling), as upstream does.
func selectHost(scores []fwk.NodePluginScores) string {
	best := scores[0]
	ties := 1
	for _, sc := range scores[1:] {
		switch {
		case sc.TotalScore > best.TotalScore:
			best, ties = sc, 1
		case sc.TotalScore == best.TotalScore:
			ties++
			if rand.IntN(ties) == 0 {
				best = sc
			}
		}
	}
	return best.Name
}

// numFeasibleNodesToFind is upstream's adaptive bound: with percentage 0,
// 50% less 1% per 125 nodes, at least 5%, and never fewer than 100 nodes.
func numFeasibleNodesToFind(percentage int32, numAll int32) int32 {
	if numAll < minFeasibleNodesToFind {
		return numAll
	}
	if percentage == 0 {
		percentage = max(int32(50)-numAll/125, minFeasibleNodesPercentageToFind)
	}
	return max(numAll*percentage/100, minFeasibleNodesToFind)
}

// findFeasible runs PreFilter, then Filter over the nodes in parallel
// until enough feasible nodes are found.
func (s *Scheduler) findFeasible(ctx context.Context, f *framework.Framework, state *framework.CycleState, pod *v1.Pod, all []fwk.NodeInfo) ([]fwk.NodeInfo, framework.Diagnosis, error) {
	diag := framework.Diagnosis{NodeToStatus: framework.NewNodeToStatus(), UnschedulablePlugins: sets.New[string](), PendingPlugins: sets.New[string]()}
	t := time.Now()
	pfResult, st, rejected := f.RunPreFilterPlugins(ctx, state, pod, all)
	metrics.ExtensionPointDuration.WithLabelValues("PreFilter", f.ProfileName()).Observe(time.Since(t).Seconds())
	diag.UnschedulablePlugins = rejected
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diag, st.AsError()
		}
		diag.NodeToStatus.AbsentStatus = st
		diag.PreFilterMsg = st.Message()
		return nil, diag, nil
	}

	// A nominated node (from an earlier preemption) is tried first.
	if nn := pod.Status.NominatedNodeName; nn != "" {
		if ni := s.snapshot.Get(nn); ni != nil && (pfResult.AllNodes() || pfResult.NodeNames.Has(nn)) {
			if st := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); st.IsSuccess() {
				return []fwk.NodeInfo{ni}, diag, nil
			}
		}
	}

	nodes := all
	if !pfResult.AllNodes() {
		nodes = make([]fwk.NodeInfo, 0, pfResult.NodeNames.Len())
		for name := range pfResult.NodeNames {
			if ni := s.snapshot.Get(name); ni != nil {
				nodes = append(nodes, ni)
			}
		}
		diag.NodeToStatus.AbsentStatus = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]")
	}
	if !f.HasFilters() {
		return nodes, diag, nil
	}
	want := int(numFeasibleNodesToFind(s.percentOf(f), int32(len(nodes))))
	feasible := make([]fwk.NodeInfo, want)
	if cap(s.filterStatuses) < len(nodes) {
		s.filterStatuses = make([]*fwk.Status, len(nodes))
	}
	statuses := s.filterStatuses[:len(nodes)]
	clear(statuses)
	var found, processed atomic.Int32
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := s.nextStart % len(nodes)
	t = time.Now()
	f.Parallelizer().Until(fctx, len(nodes), func(i int) {
		ni := nodes[(start+i)%len(nodes)]
		st := f.RunFilterPluginsWithNominatedPods(fctx, state, pod, ni)
		if st.IsSuccess() {
			n := found.Add(1)
			if int(n) > want {
				cancel()
				found.Add(-1)
				return
			}
			feasible[n-1] = ni
		} else {
			statuses[(start+i)%len(nodes)] = st
		}
		processed.Add(1)
	}, "Filter")
	metrics.ExtensionPointDuration.WithLabelValues("Filter", f.ProfileName()).Observe(time.Since(t).Seconds())
	s.nextStart = (start + int(processed.Load())) % len(all)
	feasible = feasible[:found.Load()]
	if len(feasible) > 0 {
		// The diagnosis only serves a pod that fits nowhere.
		return feasible, diag, nil
	}
	var firstErr *fwk.Status
	for i, st := range statuses {
		if st == nil {
			continue
		}
		if st.Code() == fwk.Error {
			firstErr = st
			continue
		}
		diag.NodeToStatus.Set(nodes[i].Node().Name, st)
		diag.UnschedulablePlugins.Insert(st.Plugin())
	}
	if firstErr != nil {
		return nil, diag, firstErr.AsError()
	}
	return feasible, diag, nil
}

func (s *Scheduler) percentOf(f *framework.Framework) int32 {
	if f.PercentageOfNodesToScore != nil {
		return *f.PercentageOfNodesToScore
	}
	return s.percent
}

// fail reports a failed attempt as upstream does — a FailedScheduling
// event and the PodScheduled=False condition (with the nomination, if
// preemption made one) — and requeues the pod if it still waits.
func (s *Scheduler) fail(ctx context.Context, f *framework.Framework, qpi *framework.QueuedPodInfo, err error, nominating *fwk.NominatingInfo, cycle int64) {
	log := klog.FromContext(ctx)
	pod := qpi.Pod
	reason := v1.PodReasonSchedulerError
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) {
		reason = v1.PodReasonUnschedulable
		qpi.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		qpi.PendingPlugins = fitErr.Diagnosis.PendingPlugins
		log.V(2).Info("Unable to schedule pod; no fit; waiting", "pod", klog.KObj(pod), "err", err)
	} else {
		// Errors are retried after back-off whatever happens meanwhile.
		qpi.UnschedulablePlugins = nil
		qpi.PendingPlugins = nil
		log.Info("Error scheduling pod; retrying", "pod", klog.KObj(pod), "err", err)
	}

	current, getErr := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	switch {
	case getErr != nil && apierrors.IsNotFound(getErr):
		s.Queue.Done(pod.UID)
		return
	case getErr == nil && current.UID != pod.UID:
		s.Queue.Done(pod.UID)
		return
	case getErr == nil && current.Spec.NodeName != "":
		s.Queue.Done(pod.UID)
		return
	case getErr == nil:
		// Requeue the newest version of the pod.
		qpi.PodInfo.Update(current)
	}
	s.Queue.AddUnschedulableIfNotPresent(qpi, cycle)
	if nominating.Mode() == fwk.ModeOverride {
		s.Queue.AddNominatedPod(log, qpi.PodInfo, nominating)
	}

	msg := truncate(err.Error())
	f.EventRecorder().Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", msg)
	cond := &v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason, Message: msg}
	if s.statuses != nil {
		s.statuses.enqueue(ctx, pod, cond, nominating)
		return
	}
	if err := updatePodStatus(ctx, s.client, pod, cond, nominating); err != nil {
		log.Error(err, "Update pod status", "pod", klog.KObj(pod))
	}
}

// truncate keeps event messages within the API's limit.
func truncate(msg string) string {
	const limit = 1024
	if len(msg) <= limit {
		return msg
	}
	return msg[:limit-3] + "..."
}

// updatePodStatus sets the PodScheduled condition and, when nominating
// says so, status.nominatedNodeName, skipping the write when nothing
// changes.
func updatePodStatus(ctx context.Context, client clientset.Interface, pod *v1.Pod, cond *v1.PodCondition, nominating *fwk.NominatingInfo) error {
	nnn := pod.Status.NominatedNodeName
	if nominating.Mode() == fwk.ModeOverride {
		nnn = nominating.NominatedNodeName
	}
	var old *v1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == cond.Type {
			old = &pod.Status.Conditions[i]
		}
	}
	if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && nnn == pod.Status.NominatedNodeName {
		return nil
	}
	c := cond.DeepCopy()
	c.LastProbeTime = metav1.Now()
	c.LastTransitionTime = c.LastProbeTime
	if old != nil && old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	patch := podStatusPatch(pod.UID, c, nnn)
	_, err := client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Informers exposes the shared informer factory, so the caller can start
// it and wait for its caches.
func (s *Scheduler) Informers() informers.SharedInformerFactory { return s.informers }

// WaitForCacheSync waits for every informer the scheduler uses.
func (s *Scheduler) WaitForCacheSync(ctx context.Context) bool {
	for typ, ok := range s.informers.WaitForCacheSync(ctx.Done()) {
		if !ok {
			klog.FromContext(ctx).Info("Informer did not sync", "type", typ.String())
			return false
		}
	}
	return true
}
