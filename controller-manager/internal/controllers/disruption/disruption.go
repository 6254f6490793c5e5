// Package disruption is the controller that keeps PodDisruptionBudgets'
// status — expectedPods, desiredHealthy, currentHealthy,
// disruptionsAllowed, the DisruptionAllowed condition — which the
// apiserver's eviction API reads to refuse evictions that would break a
// budget.
package disruption

import (
	"context"
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	policyinformers "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "disruption"

// DeletionTimeout is how long an eviction the apiserver admitted stays in
// status.disruptedPods waiting for the pod to go, as upstream.
const DeletionTimeout = 2 * time.Minute

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes PodDisruptionBudget status.
	Client kubernetes.Interface
	// PDBs, Pods, RCs, ReplicaSets, Deployments and StatefulSets are the
	// shared informers it reads; New registers its handlers on PDBs and
	// Pods.
	PDBs         policyinformers.PodDisruptionBudgetInformer
	Pods         coreinformers.PodInformer
	RCs          coreinformers.ReplicationControllerInformer
	ReplicaSets  appsinformers.ReplicaSetInformer
	Deployments  appsinformers.DeploymentInformer
	StatefulSets appsinformers.StatefulSetInformer
	// Scales finds the scale of pods' controllers of kinds other than the
	// built-in workloads (custom resources serving the scale subresource,
	// say), as upstream's scale finder does; nil means only the built-in
	// workloads are counted.
	Scales ScaleReader
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller reconciles PDB status; its queue holds PDB keys.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	pdbs     policylisters.PodDisruptionBudgetLister
	pods     corelisters.PodLister
	rcs      corelisters.ReplicationControllerLister
	rss      appslisters.ReplicaSetLister
	deploys  appslisters.DeploymentLister
	sets     appslisters.StatefulSetLister
	synced   []cache.InformerSynced
	loop     *worker.Loop
	now      func() time.Time
	scales   ScaleReader
}

// New returns the controller with its event handlers registered.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder, scales: o.Scales,
		pdbs: o.PDBs.Lister(), pods: o.Pods.Lister(), rcs: o.RCs.Lister(),
		rss: o.ReplicaSets.Lister(), deploys: o.Deployments.Lister(), sets: o.StatefulSets.Lister(),
		synced: []cache.InformerSynced{
			o.PDBs.Informer().HasSynced, o.Pods.Informer().HasSynced, o.RCs.Informer().HasSynced,
			o.ReplicaSets.Informer().HasSynced, o.Deployments.Informer().HasSynced,
			o.StatefulSets.Informer().HasSynced,
		},
		now: o.Now,
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.PDBs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}); err != nil {
		return nil, fmt.Errorf("watch poddisruptionbudgets: %w", err)
	}
	pod := func(obj any) {
		if p, ok := worker.ObjectAs[*corev1.Pod](obj); ok {
			c.queuePDBsOf(p)
		}
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: pod,
		UpdateFunc: func(oldObj, obj any) {
			old, n := oldObj.(*corev1.Pod), obj.(*corev1.Pod)
			if !apiequality.Semantic.DeepEqual(old.Labels, n.Labels) {
				c.queuePDBsOf(old)
			}
			c.queuePDBsOf(n)
		},
		DeleteFunc: pod,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) queuePDBsOf(pod *corev1.Pod) {
	pdbs, err := c.pdbs.PodDisruptionBudgets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() && pdb.Spec.Selector == nil {
			continue
		}
		if sel.Matches(labels.Set(pod.Labels)) {
			c.loop.Add(pdb.Namespace + "/" + pdb.Name)
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pdb, err := c.pdbs.PodDisruptionBudgets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get poddisruptionbudget %s: %w", key, err)
	}
	status, recheck, calcErr := c.compute(ctx, pdb)
	if calcErr != nil {
		// Fail safe: allow nothing while the budget cannot be worked out.
		c.recorder.Eventf(pdb, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", calcErr)
		status = pdb.Status.DeepCopy()
		status.DisruptionsAllowed = 0
		status.ObservedGeneration = pdb.Generation
		setCondition(status, metav1.ConditionFalse, policyv1.SyncFailedReason, calcErr.Error(), c.now())
	}
	if err := c.writeStatus(ctx, pdb, status); err != nil {
		return err
	}
	if recheck > 0 {
		c.loop.AddAfter(key, recheck)
	}
	return nil
}

// compute works out pdb's status from the pods it selects and their
// controllers' scale. recheck, when positive, is when a disrupted pod's
// entry expires.
func (c *Controller) compute(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudgetStatus, time.Duration, error) {
	var pods []*corev1.Pod
	// A nil selector selects nothing; an empty one every pod.
	if pdb.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			return nil, 0, fmt.Errorf("invalid selector: %w", err)
		}
		pods, err = c.pods.Pods(pdb.Namespace).List(sel)
		if err != nil {
			return nil, 0, fmt.Errorf("list pods: %w", err)
		}
	}
	expected, desired, unmanaged, err := c.expectedAndDesired(ctx, pdb, pods)
	if err != nil {
		return nil, 0, err
	}
	if len(unmanaged) > 0 {
		c.recorder.Eventf(pdb, corev1.EventTypeWarning, "UnmanagedPods",
			"Pods selected by this PodDisruptionBudget (selector: %v) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.",
			pdb.Spec.Selector)
	}
	now := c.now()
	disrupted, recheck := liveDisruptions(pods, pdb.Status.DisruptedPods, now)
	healthy := int32(0)
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if _, ok := disrupted[p.Name]; ok {
			continue
		}
		if podReady(p) {
			healthy++
		}
	}
	allowed := max(healthy-desired, 0)
	st := pdb.Status.DeepCopy()
	st.ObservedGeneration = pdb.Generation
	st.CurrentHealthy = healthy
	st.DesiredHealthy = desired
	st.ExpectedPods = expected
	st.DisruptionsAllowed = allowed
	st.DisruptedPods = disrupted
	if allowed > 0 {
		setCondition(st, metav1.ConditionTrue, policyv1.SufficientPodsReason, "", now)
	} else {
		setCondition(st, metav1.ConditionFalse, policyv1.InsufficientPodsReason, "", now)
	}
	return st, recheck, nil
}

// expectedAndDesired returns the expected pod count and the desired
// healthy count, as upstream: an integer minAvailable counts the selected
// pods; maxUnavailable and a percentage minAvailable count the scale of
// the pods' controllers.
func (c *Controller) expectedAndDesired(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expected, unmanaged, err = c.expectedScale(ctx, pdb, pods)
		if err != nil {
			return 0, 0, nil, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("maxUnavailable: %w", err)
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired = pdb.Spec.MinAvailable.IntVal
		expected = int32(len(pods))
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.String:
		expected, unmanaged, err = c.expectedScale(ctx, pdb, pods)
		if err != nil {
			return 0, 0, nil, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("minAvailable: %w", err)
		}
		desired = int32(minAvailable)
	}
	return expected, desired, unmanaged, nil
}

// expectedScale sums the replicas of the controllers of pods, each once.
func (c *Controller) expectedScale(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (int32, []string, error) {
	visited := map[string]bool{}
	scales := map[string]int32{}
	var unmanaged []string
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if visited[string(ref.UID)] {
			continue
		}
		visited[string(ref.UID)] = true
		uid, scale, err := c.scaleOf(ctx, pdb.Namespace, ref)
		if err != nil {
			return 0, nil, fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		scales[uid] = scale
	}
	var total int32
	for _, s := range scales {
		total += s
	}
	return total, unmanaged, nil
}

// scaleOf returns the UID and replicas of the controller that decides how
// many pods ref's kind runs: a ReplicaSet's Deployment if it has one; for
// other kinds, the scale subresource.
func (c *Controller) scaleOf(ctx context.Context, ns string, ref *metav1.OwnerReference) (string, int32, error) {
	replicas := func(r *int32) int32 {
		if r == nil {
			return 1
		}
		return *r
	}
	switch {
	case ref.Kind == "ReplicationController" && ref.APIVersion == "v1":
		rc, err := c.rcs.ReplicationControllers(ns).Get(ref.Name)
		if err != nil || rc.UID != ref.UID {
			return "", 0, fmt.Errorf("controller ReplicationController %s not found", ref.Name)
		}
		return string(rc.UID), replicas(rc.Spec.Replicas), nil
	case ref.Kind == "ReplicaSet" && apiGroup(ref.APIVersion) == appsv1.GroupName:
		rs, err := c.rss.ReplicaSets(ns).Get(ref.Name)
		if err != nil || rs.UID != ref.UID {
			return "", 0, fmt.Errorf("controller ReplicaSet %s not found", ref.Name)
		}
		if d := metav1.GetControllerOf(rs); d != nil && d.Kind == "Deployment" && apiGroup(d.APIVersion) == appsv1.GroupName {
			dep, err := c.deploys.Deployments(ns).Get(d.Name)
			if err == nil && dep.UID == d.UID {
				return string(dep.UID), replicas(dep.Spec.Replicas), nil
			}
		}
		return string(rs.UID), replicas(rs.Spec.Replicas), nil
	case ref.Kind == "StatefulSet" && apiGroup(ref.APIVersion) == appsv1.GroupName:
		ss, err := c.sets.StatefulSets(ns).Get(ref.Name)
		if err != nil || ss.UID != ref.UID {
			return "", 0, fmt.Errorf("controller StatefulSet %s not found", ref.Name)
		}
		return string(ss.UID), replicas(ss.Spec.Replicas), nil
	}
	if c.scales == nil {
		return "", 0, fmt.Errorf("controller %s %s has no known scale", ref.Kind, ref.Name)
	}
	uid, n, err := c.scales.Scale(ctx, ns, ref)
	if err != nil {
		return "", 0, fmt.Errorf("scale of %s %s: %w", ref.Kind, ref.Name, err)
	}
	if uid != string(ref.UID) {
		// Another object of that name: the pod's controller is gone.
		return "", 0, fmt.Errorf("found no controllers for pod's owner %s %s", ref.Kind, ref.Name)
	}
	return uid, n, nil
}

func apiGroup(apiVersion string) string {
	for i := range apiVersion {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

// liveDisruptions drops from disrupted the pods that are gone or whose
// eviction expired, and says when the next entry expires.
func liveDisruptions(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) (map[string]metav1.Time, time.Duration) {
	if len(disrupted) == 0 {
		return nil, 0
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	out := map[string]metav1.Time{}
	next := time.Duration(math.MaxInt64)
	for name, at := range disrupted {
		p, ok := byName[name]
		if !ok || p.DeletionTimestamp != nil {
			continue
		}
		expires := at.Add(DeletionTimeout)
		if !expires.After(now) {
			continue
		}
		out[name] = at
		next = min(next, expires.Sub(now))
	}
	if len(out) == 0 {
		return nil, 0
	}
	return out, next
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func setCondition(st *policyv1.PodDisruptionBudgetStatus, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: policyv1.DisruptionAllowedCondition, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now),
	})
}

func (c *Controller) writeStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, st *policyv1.PodDisruptionBudgetStatus) error {
	if apiequality.Semantic.DeepEqual(&pdb.Status, st) {
		return nil
	}
	upd := pdb.DeepCopy()
	upd.Status = *st
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of poddisruptionbudget %s/%s: %w", pdb.Namespace, pdb.Name, err)
	}
	return nil
}
