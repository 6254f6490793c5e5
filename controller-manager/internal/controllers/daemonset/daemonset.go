// Package daemonset is the controller that runs one pod of each DaemonSet
// on every node its template fits: node selector and required node
// affinity, and taints the template (plus upstream's default tolerations of
// node conditions) tolerates. Each pod is pinned to its node through
// required node affinity on metadata.name, as upstream does, so the
// scheduler binds it there. Templates are kept as ControllerRevisions and
// rolled out node by node within maxUnavailable, or with maxSurge a new pod
// starts beside the old one, which goes once the new one is available.
package daemonset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/expectations"
	"trireme.dev/controller-manager/internal/history"
	"trireme.dev/controller-manager/internal/ownership"
	"trireme.dev/controller-manager/internal/pods"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "daemonset"

// Kind is the DaemonSet kind.
var Kind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// templateGenerationLabel is the deprecated label upstream still sets.
const templateGenerationLabel = appsv1.DeprecatedTemplateGeneration

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client creates and deletes pods and ControllerRevisions and writes
	// DaemonSet status.
	Client kubernetes.Interface
	// DaemonSets, Pods, Nodes and Revisions are the shared informers; New
	// registers its handlers on the first three.
	DaemonSets appsinformers.DaemonSetInformer
	Pods       coreinformers.PodInformer
	Nodes      coreinformers.NodeInformer
	Revisions  appsinformers.ControllerRevisionInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the daemonset controller.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	sets      appslisters.DaemonSetLister
	pods      corelisters.PodLister
	nodes     corelisters.NodeLister
	revisions appslisters.ControllerRevisionLister
	exp       *expectations.Store
	loop      *worker.Loop
	synced    []cache.InformerSynced
	now       func() time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		sets: o.DaemonSets.Lister(), pods: o.Pods.Lister(), nodes: o.Nodes.Lister(), revisions: o.Revisions.Lister(),
		exp: expectations.New(),
		synced: []cache.InformerSynced{o.DaemonSets.Informer().HasSynced, o.Pods.Informer().HasSynced,
			o.Nodes.Informer().HasSynced, o.Revisions.Informer().HasSynced},
		now: o.Now,
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.DaemonSets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: func(obj any) {
			if ds, ok := worker.ObjectAs[*appsv1.DaemonSet](obj); ok {
				c.exp.Delete(ds.Namespace + "/" + ds.Name)
			}
			c.loop.AddObject(obj)
		},
	}); err != nil {
		return nil, fmt.Errorf("watch daemonsets: %w", err)
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(obj, true, false) },
		UpdateFunc: func(_, obj any) { c.podChanged(obj, false, false) },
		DeleteFunc: func(obj any) { c.podChanged(obj, false, true) },
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	if _, err := o.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.enqueueAll() },
		UpdateFunc: func(oldObj, obj any) {
			old, n := oldObj.(*corev1.Node), obj.(*corev1.Node)
			if !apiequality.Semantic.DeepEqual(old.Labels, n.Labels) || !apiequality.Semantic.DeepEqual(old.Spec.Taints, n.Spec.Taints) ||
				old.Spec.Unschedulable != n.Spec.Unschedulable {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(any) { c.enqueueAll() },
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) enqueueAll() {
	list, err := c.sets.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range list {
		c.loop.Add(ds.Namespace + "/" + ds.Name)
	}
}

func (c *Controller) podChanged(obj any, added, deleted bool) {
	pod, ok := worker.ObjectAs[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != Kind.Kind {
		return
	}
	ds, err := c.sets.DaemonSets(pod.Namespace).Get(ref.Name)
	if err != nil || ds.UID != ref.UID {
		return
	}
	key := ds.Namespace + "/" + ds.Name
	switch {
	case added && pod.DeletionTimestamp == nil:
		c.exp.CreationObserved(key)
	case deleted || pod.DeletionTimestamp != nil:
		c.exp.DeletionObserved(key, pods.Key(pod))
	}
	c.loop.Add(key)
}

// defaultTolerations are added to every daemon pod, as upstream does, so
// that node conditions do not evict or block it.
func defaultTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	t := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if spec.HostNetwork {
		t = append(t, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return t
}

func addTolerations(spec *corev1.PodSpec) {
	for _, t := range defaultTolerations(spec) {
		if !slices.ContainsFunc(spec.Tolerations, func(x corev1.Toleration) bool { return x.MatchToleration(&t) }) {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
}

// pinToNode replaces the required node affinity with one term selecting
// node by name; the node was already checked against the original terms.
func pinToNode(spec *corev1.PodSpec, node string) {
	term := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
	}}}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}
}

// targetNode is the node pod runs on or is pinned to.
func targetNode(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// shouldRun reports whether a daemon pod should be started on node, and
// whether one already there may keep running (NoSchedule taints block new
// pods only).
func shouldRun(ds *appsv1.DaemonSet, node *corev1.Node) (run, keep bool) {
	spec := ds.Spec.Template.Spec.DeepCopy()
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, false
	}
	pod := &corev1.Pod{Spec: *spec}
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	if err != nil || !ok {
		return false, false
	}
	addTolerations(spec)
	logger := klog.Background()
	run, keep = true, true
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		tolerated := slices.ContainsFunc(spec.Tolerations, func(x corev1.Toleration) bool { return x.ToleratesTaint(logger, t, false) })
		if tolerated {
			continue
		}
		run = false
		if t.Effect == corev1.TaintEffectNoExecute {
			keep = false
		}
	}
	return run, keep
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.sets.DaemonSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.exp.Delete(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get daemonset %s: %w", key, err)
	}
	ds := cached.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || selector.Empty() {
		c.recorder.Eventf(ds, corev1.EventTypeWarning, "SelectingAll", "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	canAdopt := ownership.RecheckOwner(ds.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
	})
	allPods, err := c.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	mine, err := ownership.Claim(ctx, &ownership.Claimer{Owner: ds, Kind: Kind, Selector: selector, CanAdopt: canAdopt,
		Patch: func(ctx context.Context, ns, name string, patch []byte) error {
			_, err := c.client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}}, allPods)
	if err != nil {
		return fmt.Errorf("claim pods of daemonset %s: %w", key, err)
	}
	allRevs, err := c.revisions.ControllerRevisions(namespace).List(selector)
	if err != nil {
		return fmt.Errorf("list revisions: %w", err)
	}
	revs, err := ownership.Claim(ctx, &ownership.Claimer{Owner: ds, Kind: Kind, Selector: selector, CanAdopt: canAdopt,
		Patch: func(ctx context.Context, ns, name string, patch []byte) error {
			_, err := c.client.AppsV1().ControllerRevisions(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}}, allRevs)
	if err != nil {
		return fmt.Errorf("claim revisions of daemonset %s: %w", key, err)
	}
	data, err := history.TemplatePatch(ds.Spec.Template)
	if err != nil {
		return fmt.Errorf("revision of daemonset %s: %w", key, err)
	}
	collisions := ptr.Deref(ds.Status.CollisionCount, 0)
	next := history.Next(revs)
	build := func(cc *int32) *appsv1.ControllerRevision {
		return history.NewWithHash(ds, Kind, ds.Spec.Template.Labels, data, next,
			history.PodTemplateHash(&ds.Spec.Template, cc), appsv1.DefaultDaemonSetUniqueLabelKey)
	}
	cur, collisions, err := history.Sync(ctx, c.client, revs, build(&collisions), build, collisions)
	if err != nil {
		return err
	}
	hash := cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	byNode := map[string][]*corev1.Pod{}
	for _, p := range mine {
		n := targetNode(p)
		byNode[n] = append(byNode[n], p)
	}
	for _, list := range byNode {
		slices.SortFunc(list, func(a, b *corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	}
	var syncErr error
	if ds.DeletionTimestamp == nil && c.exp.Satisfied(key) {
		syncErr = c.manage(ctx, key, ds, nodes, byNode, hash)
		if syncErr == nil && c.exp.Satisfied(key) && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			syncErr = c.rollingUpdate(ctx, key, ds, nodes, byNode, hash)
		}
	}
	if err := c.updateStatus(ctx, ds, nodes, byNode, hash, collisions); err != nil {
		return errors.Join(syncErr, err)
	}
	if syncErr != nil {
		return syncErr
	}
	live := map[string]bool{cur.Name: true}
	for _, r := range revs {
		for _, p := range mine {
			if p.Labels[appsv1.ControllerRevisionHashLabelKey] == r.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] {
				live[r.Name] = true
			}
		}
	}
	return history.Truncate(ctx, c.client, revs, live, ptr.Deref(ds.Spec.RevisionHistoryLimit, 10))
}

func hashOf(p *corev1.Pod) string { return p.Labels[appsv1.ControllerRevisionHashLabelKey] }

func surgeAndUnavailable(ds *appsv1.DaemonSet, desired int) (int, int) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil {
		return 0, 1
	}
	surge, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxSurge, intstr.FromInt32(0)), desired, true)
	unavailable, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxUnavailable, intstr.FromInt32(1)), desired, true)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

func live(list []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range list {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// manage starts missing daemon pods and deletes those that must not run:
// failed ones, duplicates, those on nodes they no longer fit or that are
// gone, and, when surging, old ones whose replacement is available.
func (c *Controller) manage(ctx context.Context, key string, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string) error {
	surge, _ := surgeAndUnavailable(ds, len(nodes))
	now := c.now()
	var create []string
	var remove []*corev1.Pod
	known := map[string]bool{}
	for _, node := range nodes {
		known[node.Name] = true
		run, keep := shouldRun(ds, node)
		list := live(byNode[node.Name])
		switch {
		case run && len(list) == 0:
			create = append(create, node.Name)
		case keep:
			var running []*corev1.Pod
			for _, p := range list {
				if p.Status.Phase == corev1.PodFailed {
					c.recorder.Eventf(ds, corev1.EventTypeWarning, "FailedDaemonPod", "Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name)
					remove = append(remove, p)
					continue
				}
				running = append(running, p)
			}
			if len(running) <= 1 {
				continue
			}
			if surge == 0 {
				remove = append(remove, running[1:]...)
				continue
			}
			var newest, oldest *corev1.Pod
			for _, p := range running {
				switch {
				case hashOf(p) == hash && newest == nil:
					newest = p
				case hashOf(p) != hash && oldest == nil:
					oldest = p
				default:
					remove = append(remove, p)
				}
			}
			if newest != nil && oldest != nil && pods.Available(newest, ds.Spec.MinReadySeconds, now) {
				remove = append(remove, oldest)
			}
		case len(list) > 0:
			remove = append(remove, list...)
		}
	}
	for n, list := range byNode {
		if !known[n] {
			remove = append(remove, live(list)...)
		}
	}
	return c.syncNodes(ctx, key, ds, remove, create, hash)
}

// rollingUpdate replaces pods of old revisions, within maxUnavailable or,
// with maxSurge, by starting new pods beside them.
func (c *Controller) rollingUpdate(ctx context.Context, key string, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string) error {
	desired := 0
	var eligible []*corev1.Node
	for _, n := range nodes {
		if run, _ := shouldRun(ds, n); run {
			desired++
			eligible = append(eligible, n)
		}
	}
	surge, maxUnavailable := surgeAndUnavailable(ds, desired)
	now := c.now()
	available := func(p *corev1.Pod) bool { return pods.Available(p, ds.Spec.MinReadySeconds, now) }
	var allowed, candidates []string
	var deleteNow, deleteCandidates []*corev1.Pod
	unavailable, surging := 0, 0
	for _, n := range eligible {
		var newPod, oldPod *corev1.Pod
		dup := false
		for _, p := range live(byNode[n.Name]) {
			if p.Status.Phase == corev1.PodFailed {
				continue
			}
			if hashOf(p) == hash {
				dup = dup || newPod != nil
				newPod = p
			} else {
				dup = dup || oldPod != nil
				oldPod = p
			}
		}
		if dup {
			continue
		}
		if surge == 0 {
			switch {
			case oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				unavailable++
			case newPod != nil:
				if !available(newPod) {
					unavailable++
				}
			default:
				if !available(oldPod) {
					deleteNow = append(deleteNow, oldPod)
				} else {
					deleteCandidates = append(deleteCandidates, oldPod)
				}
			}
			continue
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			if !available(oldPod) {
				allowed = append(allowed, n.Name)
			} else {
				candidates = append(candidates, n.Name)
			}
		default:
			if !available(newPod) {
				surging++
			}
		}
	}
	if surge == 0 {
		n := max(maxUnavailable-unavailable, 0)
		return c.syncNodes(ctx, key, ds, append(deleteNow, deleteCandidates[:min(n, len(deleteCandidates))]...), nil, hash)
	}
	n := max(surge-surging, 0)
	return c.syncNodes(ctx, key, ds, nil, append(allowed, candidates[:min(n, len(candidates))]...), hash)
}

// syncNodes deletes remove and starts a pod on each node of create.
func (c *Controller) syncNodes(ctx context.Context, key string, ds *appsv1.DaemonSet, remove []*corev1.Pod, create []string, hash string) error {
	if len(remove) == 0 && len(create) == 0 {
		return nil
	}
	create = create[:min(len(create), 250)]
	keys := make([]string, len(remove))
	for i, p := range remove {
		keys[i] = pods.Key(p)
	}
	c.exp.ExpectDeletions(key, keys)
	var errs []error
	for _, p := range remove {
		err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
		if err != nil {
			c.exp.DeletionObserved(key, pods.Key(p))
			if !apierrors.IsNotFound(err) {
				c.recorder.Eventf(ds, corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
				errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
			}
			continue
		}
		c.recorder.Eventf(ds, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Name)
	}
	if len(create) == 0 {
		return errors.Join(errs...)
	}
	c.exp.ExpectCreations(key, len(create))
	ref := ownership.Ref(ds, Kind)
	template := ds.Spec.Template.DeepCopy()
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	template.Labels[appsv1.ControllerRevisionHashLabelKey] = hash
	template.Labels[templateGenerationLabel] = strconv.FormatInt(ds.Generation, 10)
	addTolerations(&template.Spec)
	ok, err := pods.SlowStartBatch(len(create), 1, func(i int) error {
		pod := pods.FromTemplate(template, ds.Name, &ref)
		pinToNode(&pod.Spec, create[i])
		created, err := c.client.CoreV1().Pods(ds.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			c.recorder.Eventf(ds, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
			return err
		}
		c.recorder.Eventf(ds, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", created.Name)
		return nil
	})
	for range len(create) - ok {
		c.exp.CreationObserved(key)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("create daemon pods: %w", err))
	}
	return errors.Join(errs...)
}

func (c *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string, collisions int32) error {
	now := c.now()
	s := appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, CollisionCount: ptr.To(collisions), Conditions: ds.Status.Conditions}
	requeue := false
	for _, n := range nodes {
		run, _ := shouldRun(ds, n)
		list := live(byNode[n.Name])
		if !run {
			if len(list) > 0 {
				s.NumberMisscheduled++
			}
			continue
		}
		s.DesiredNumberScheduled++
		if len(list) == 0 {
			continue
		}
		s.CurrentNumberScheduled++
		p := list[0]
		for _, q := range list {
			if hashOf(q) == hash {
				p = q
				break
			}
		}
		if pods.Ready(p) {
			s.NumberReady++
			if pods.Available(p, ds.Spec.MinReadySeconds, now) {
				s.NumberAvailable++
			} else {
				requeue = true
			}
		}
		if hashOf(p) == hash {
			s.UpdatedNumberScheduled++
		}
	}
	s.NumberUnavailable = s.DesiredNumberScheduled - s.NumberAvailable
	if requeue && ds.Spec.MinReadySeconds > 0 {
		c.loop.AddAfter(ds.Namespace+"/"+ds.Name, time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	if apiequality.Semantic.DeepEqual(s, ds.Status) {
		return nil
	}
	ds.Status = s
	if _, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return nil
}
