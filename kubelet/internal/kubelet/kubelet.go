package kubelet

import (
	"context"
	"hash/fnv"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	cri "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"trireme.dev/kubelet/internal/crilist"
	"trireme.dev/kubelet/internal/metrics"
	"trireme.dev/kubelet/internal/podcgroup"
	"trireme.dev/kubelet/internal/podconfig"
	"trireme.dev/kubelet/internal/podstatus"
)

// Prober is what the pod workers need from the probe manager: results by
// container ID, and the probe workers started and stopped as containers
// come and go.
type Prober interface {
	// UpdatePod starts probe workers for the pod's running containers and
	// stops those of containers that no longer run.
	UpdatePod(pod *corev1.Pod, status *corev1.PodStatus)
	// RemovePod stops every probe worker of the pod.
	RemovePod(uid types.UID)
	// Ready reports the verdict of a container's readiness probe; false
	// until it first succeeds. Asked only of containers with one.
	Ready(containerID string) bool
	// Started reports the verdict of a container's startup probe; false
	// until it succeeds. Asked only of containers with one.
	Started(containerID string) bool
	// LivenessFailed reports a liveness (or startup) failure past its
	// threshold: the container must be restarted.
	LivenessFailed(containerID string) bool
}

// PodCgroupWriter sets the values of a pod's cgroup.
type PodCgroupWriter interface {
	// Write sets the cgroup at path (below each hierarchy's root) to v.
	Write(path string, v podcgroup.Values) error
}

// Volumes prepares and removes a pod's volumes on the host.
type Volumes interface {
	// Setup makes every volume of pod available on the host and returns
	// the host path of each, by volume name. It is called on every sync,
	// so that configMap and secret contents follow their objects.
	// imageIDs are the runtime's IDs of the images of image volumes, by
	// volume name, pulled as their pull policies say.
	Setup(ctx context.Context, pod *corev1.Pod, imageIDs map[string]string) (map[string]string, error)
	// Teardown removes every volume of the pod with this UID.
	Teardown(ctx context.Context, uid types.UID) error
	// CleanupOrphanedImageVolumes removes the image volumes of pods that
	// active says are gone.
	CleanupOrphanedImageVolumes(ctx context.Context, active func(types.UID) bool) error
	// PodDir is the pod's directory on the host.
	PodDir(uid types.UID) string
}

// Config is what a Kubelet runs with.
type Config struct {
	// NodeName is the node's name; NodeIPs its addresses, first primary.
	NodeName string
	NodeIPs  []net.IP
	// Client talks to the apiserver; nil runs static pods only.
	Client kubernetes.Interface
	// Runtime and Images are the CRI services.
	Runtime cri.RuntimeService
	Images  cri.ImageManagerService
	// RuntimeName prefixes container IDs ("containerd").
	RuntimeName string
	// PodLogsDir holds the containers' log files.
	PodLogsDir string
	// ClusterDNS, ClusterDomain and ResolvConf decide pods' DNS.
	ClusterDNS    []string
	ClusterDomain string
	ResolvConf    string
	// Services lists Services for the environment variables of pods with
	// enableServiceLinks; nil gives none.
	Services corelisters.ServiceLister
	// Volumes and Prober are the volume and probe managers.
	Volumes Volumes
	Prober  Prober
	// Recorder records events on pods.
	Recorder record.EventRecorder
	// RelistPeriod is how often the runtime is listed for changes.
	RelistPeriod time.Duration
	// ResyncPeriod is how often every pod is synced without a change.
	ResyncPeriod time.Duration
	// CgroupParent is the parent of pod cgroups ("/kubepods") with the
	// cgroupfs driver.
	CgroupParent string
	// CgroupDriver is cgroupfs or systemd.
	CgroupDriver string
	// RemoveCgroups removes cgroups (paths below each hierarchy's root) and
	// the empty ones below them; nil leaves pod cgroups in place.
	RemoveCgroups func(paths ...string) error
	// PodCgroups writes the cpu and memory values of pod cgroups (the
	// cgroupfs driver's paths); nil leaves them as the runtime makes them.
	PodCgroups PodCgroupWriter
	// Lister lists what relist compares every RelistPeriod; nil lists it
	// through Runtime, decoding whole CRI messages.
	Lister Lister
	// Allocatable returns the node's allocatable resources, which the
	// downward API reports for limits a container does not set; nil
	// reports them as 0.
	Allocatable func() corev1.ResourceList
	// ParallelSandboxes bounds how many pod sandboxes are created at
	// once (0: four per CPU, at least 4: much of a sandbox's creation
	// waits on disk syncs and plugin processes, so fewer leave the CPUs
	// idle); see Kubelet.sandboxSlots.
	ParallelSandboxes int
}

// Kubelet runs pods through the CRI.
type Kubelet struct {
	cfg      Config
	log      logr.Logger
	backoff  *flowcontrol.Backoff
	imageBO  *flowcontrol.Backoff
	mu       sync.Mutex
	workers  map[types.UID]*podWorker
	synced   bool
	lastSeen map[types.UID]string
	// podConfig builds pods' CRI configurations, with what cfg says;
	// statuses computes pods' statuses.
	podConfig *podconfig.Builder
	statuses  *podstatus.Computer
	// sandboxSlots bounds the sandboxes being created at once. Creating
	// one is the runtime's heaviest step (network namespace, CNI plugins,
	// the pause container); a burst of pods all creating theirs at once
	// shares the machine so that every pod waits for the slowest, while
	// pods admitted in turn (a channel's blocked senders are served in
	// order) start in the order they came, as fast as the runtime allows.
	// A slot is held for RunPodSandbox only, not while the containers
	// are created and started.
	sandboxSlots chan struct{}
	// evented is set while the runtime's container event stream is live.
	evented atomic.Bool
	// relisted is relist's memory of the runtime; sandboxesChanged makes
	// the next relist list sandboxes rather than reuse the last list.
	relisted         relistCache
	sandboxesChanged atomic.Bool
}

// New returns a Kubelet; Run starts it.
func New(cfg Config, log logr.Logger) *Kubelet {
	if cfg.RelistPeriod == 0 {
		cfg.RelistPeriod = time.Second
	}
	if cfg.Lister == nil {
		cfg.Lister = runtimeLister{cfg.Runtime}
	}
	if cfg.ResyncPeriod == 0 {
		cfg.ResyncPeriod = time.Minute
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = "/kubepods"
	}
	if cfg.RuntimeName == "" {
		cfg.RuntimeName = "containerd"
	}
	if cfg.ParallelSandboxes <= 0 {
		cfg.ParallelSandboxes = max(4, 4*runtime.NumCPU())
	}
	hostIPs := make([]string, 0, len(cfg.NodeIPs))
	for _, ip := range cfg.NodeIPs {
		hostIPs = append(hostIPs, ip.String())
	}
	builder := &podconfig.Builder{
		PodLogsDir:    cfg.PodLogsDir,
		CgroupParent:  cfg.CgroupParent,
		CgroupDriver:  cfg.CgroupDriver,
		ClusterDNS:    cfg.ClusterDNS,
		ClusterDomain: cfg.ClusterDomain,
		ResolvConf:    cfg.ResolvConf,
		HostIPs:       hostIPs,
		Client:        cfg.Client,
		Services:      cfg.Services,
		PodDirs:       cfg.Volumes,
		Allocatable:   cfg.Allocatable,
	}
	return &Kubelet{
		sandboxSlots: make(chan struct{}, cfg.ParallelSandboxes),
		cfg:          cfg,
		log:          log,
		backoff:      flowcontrol.NewBackOff(10*time.Second, 300*time.Second),
		imageBO:      flowcontrol.NewBackOff(10*time.Second, 300*time.Second),
		workers:      map[types.UID]*podWorker{},
		lastSeen:     map[types.UID]string{},
		podConfig:    builder,
		statuses:     &podstatus.Computer{HostIPs: hostIPs, RuntimeName: cfg.RuntimeName, Probes: cfg.Prober, PodLogDir: builder.PodLogDir},
	}
}

// SetSourcesReady tells the kubelet that every pod source has delivered
// its first list, so runtime pods no source names are orphans to stop.
func (k *Kubelet) SetSourcesReady() {
	k.mu.Lock()
	k.synced = true
	k.mu.Unlock()
}

// UpsertPod hands the kubelet a pod from a source (new or changed).
func (k *Kubelet) UpsertPod(ctx context.Context, pod *corev1.Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.workers[pod.UID]
	if w == nil {
		k.log.V(2).Info("SyncLoop ADD", "pod", types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, "podUID", pod.UID)
		w = newPodWorker(pod.UID)
		w.steps = &startSteps{last: w.started}
		w.rejected = k.admitOrReject(pod)
		k.workers[pod.UID] = w
		go k.runWorker(ctx, w)
		w.update(pod)
		return
	}
	if old, removed := w.snapshot(); !removed && old != nil && statusEcho(old, pod, w.written()) {
		// Only what the kubelet itself writes changed (its own status
		// patch coming back): keep the newer object, but there is
		// nothing to sync, as upstream reconciles rather than syncs such
		// updates.
		w.replace(pod)
		if !isStatic(pod) {
			// A static pod's status from its source is none; its mirror's
			// comes through MirrorSeen.
			k.reconcileStatus(w, &pod.Status)
		}
		return
	}
	w.update(pod)
}

// statusEcho says whether cur differs from old only in what the kubelet
// writes, so that syncing would change nothing: the spec, labels,
// annotations, owners and deletion are equal, and the phase and the
// conditions the kubelet does not own (readiness gates, disruption
// targets, PodScheduled) are either as before or as the kubelet last
// wrote them (written, nil before its first write).
func statusEcho(old, cur *corev1.Pod, written *corev1.PodStatus) bool {
	if old.UID != cur.UID ||
		!apiequality.Semantic.DeepEqual(old.Spec, cur.Spec) ||
		!apiequality.Semantic.DeepEqual(old.Labels, cur.Labels) ||
		!apiequality.Semantic.DeepEqual(old.Annotations, cur.Annotations) ||
		!apiequality.Semantic.DeepEqual(old.DeletionTimestamp, cur.DeletionTimestamp) ||
		!apiequality.Semantic.DeepEqual(old.DeletionGracePeriodSeconds, cur.DeletionGracePeriodSeconds) ||
		!apiequality.Semantic.DeepEqual(old.OwnerReferences, cur.OwnerReferences) {
		return false
	}
	if cur.Status.Phase != old.Status.Phase && (written == nil || cur.Status.Phase != written.Phase) {
		return false
	}
	foreign := foreignConditions(cur.Status.Conditions)
	return apiequality.Semantic.DeepEqual(foreign, foreignConditions(old.Status.Conditions)) ||
		(written != nil && apiequality.Semantic.DeepEqual(foreign, foreignConditions(written.Conditions)))
}

// foreignConditions are the conditions the kubelet does not own.
func foreignConditions(conditions []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range conditions {
		if !podstatus.OwnedByKubelet(c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// RemovePod tells the kubelet that no source names the pod any more.
func (k *Kubelet) RemovePod(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.workers[uid]; w != nil {
		w.remove()
	}
}

// Pods returns the pods the kubelet runs, as last given by their sources
// and with the status last computed.
func (k *Kubelet) Pods() []*corev1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(k.workers))
	for _, w := range k.workers {
		if p := w.current(); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// MirrorSeen tells the worker of the static pod with this UID the status
// its mirror pod holds (empty when the mirror was just created: a changed
// manifest replaces the mirror, and the status went to the old one, or
// nowhere); see serverStatus.
func (k *Kubelet) MirrorSeen(uid types.UID, st *corev1.PodStatus) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.workers[uid]; w != nil {
		k.reconcileStatus(w, st)
	}
}

// reconcileStatus tells w the status the API holds for its pod, and says
// so when the worker is to write its own again. The logger is made only
// then: this runs on every status echo of every pod.
func (k *Kubelet) reconcileStatus(w *podWorker, st *corev1.PodStatus) {
	if !w.serverStatus(st) {
		return
	}
	log := k.log.WithValues("podUID", w.uid)
	if pod, _ := w.snapshot(); pod != nil {
		log = log.WithValues("pod", types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	}
	log.Info("The API holds another status than the one written; writing it again", "phase", st.Phase)
}

// FindPod returns the running pod with this namespace and name.
func (k *Kubelet) FindPod(namespace, name string) *corev1.Pod {
	for _, p := range k.Pods() {
		if p.Namespace == namespace && p.Name == name {
			return p
		}
	}
	return nil
}

// Run relists the runtime until ctx ends, waking the workers of pods whose
// containers changed and starting workers for orphans. Where the runtime
// streams container events, they wake the workers and the relist runs
// only every eventedRelistPeriod.
func (k *Kubelet) Run(ctx context.Context) {
	go k.watchContainerEvents(ctx)
	go wait.UntilWithContext(ctx, k.cleanupOrphanedVolumes, orphanedVolumesPeriod)
	var last time.Time
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if k.evented.Load() && time.Since(last) < eventedRelistPeriod {
			return
		}
		last = time.Now()
		k.relist(ctx)
	}, k.cfg.RelistPeriod)
}

// orphanedVolumesPeriod is how often volumes that outlived their pods
// are looked for, as upstream's housekeeping does every two seconds for
// pod directories; a view found is one the kubelet failed to remove.
const orphanedVolumesPeriod = 30 * time.Second

// cleanupOrphanedVolumes removes the image volumes of pods the kubelet
// runs no worker for, once every source has delivered its pods (before
// then, a pod about to be given back would lose its volume).
func (k *Kubelet) cleanupOrphanedVolumes(ctx context.Context) {
	k.mu.Lock()
	synced := k.synced
	k.mu.Unlock()
	if !synced {
		return
	}
	active := func(uid types.UID) bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.workers[uid] != nil
	}
	if err := k.cfg.Volumes.CleanupOrphanedImageVolumes(ctx, active); err != nil {
		k.log.Error(err, "Remove orphaned image volumes failed")
	}
}

// sandboxRelistPeriod is the longest relist reuses its last list of pod
// sandboxes. Listing them is the larger half of a relist's cost, and a
// sandbox seldom changes unless its containers do or the kubelet changes
// it; a sandbox that fails on its own is noticed within this period.
const sandboxRelistPeriod = 5 * time.Second

// relistCache is what relist keeps between runs; only relist touches it.
type relistCache struct {
	sandboxes  []crilist.Entry
	listedAt   time.Time
	containers uint64 // digest of the containers' IDs and states
}

// Lister lists the runtime's containers and pod sandboxes: each one's ID,
// state and pod UID.
type Lister interface {
	Containers(ctx context.Context) ([]crilist.Entry, error)
	Sandboxes(ctx context.Context) ([]crilist.Entry, error)
}

// runtimeLister is a Lister through the CRI client.
type runtimeLister struct{ rs cri.RuntimeService }

func (l runtimeLister) Containers(ctx context.Context) ([]crilist.Entry, error) {
	list, err := l.rs.ListContainers(ctx, nil)
	out := make([]crilist.Entry, len(list))
	for i, c := range list {
		out[i] = crilist.Entry{ID: c.Id, State: int32(c.State), PodUID: c.Labels[podconfig.LabelPodUID]}
	}
	return out, err
}

func (l runtimeLister) Sandboxes(ctx context.Context) ([]crilist.Entry, error) {
	list, err := l.rs.ListPodSandbox(ctx, nil)
	out := make([]crilist.Entry, len(list))
	for i, s := range list {
		out[i] = crilist.Entry{ID: s.Id, State: int32(s.State), PodUID: s.Labels[podconfig.LabelPodUID]}
	}
	return out, err
}

func (k *Kubelet) relist(ctx context.Context) {
	containers, err := k.cfg.Lister.Containers(ctx)
	if err != nil {
		k.log.Error(err, "List containers failed")
		return
	}
	digest := containersDigest(containers)
	c := &k.relisted
	sandboxes := c.sandboxes
	if k.sandboxesChanged.Swap(false) || sandboxes == nil || digest != c.containers || time.Since(c.listedAt) >= sandboxRelistPeriod {
		if sandboxes, err = k.cfg.Lister.Sandboxes(ctx); err != nil {
			k.sandboxesChanged.Store(true)
			k.log.Error(err, "List pod sandboxes failed")
			return
		}
		c.sandboxes, c.listedAt = sandboxes, time.Now()
	}
	c.containers = digest
	entries := map[types.UID][]string{}
	ready := 0
	for _, s := range sandboxes {
		state := runtimeapi.PodSandboxState(s.State)
		if state == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
		uid := types.UID(s.PodUID)
		entries[uid] = append(entries[uid], sandboxEntry(s.ID, state))
	}
	for _, c := range containers {
		uid := types.UID(c.PodUID)
		entries[uid] = append(entries[uid], containerEntry(c.ID, runtimeapi.ContainerState(c.State)))
	}
	prints := make(map[types.UID]string, len(entries))
	for uid, e := range entries {
		prints[uid] = fingerprint(e)
	}
	metrics.RunningPods.Set(float64(ready))
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid, p := range prints {
		if uid == "" || k.lastSeen[uid] == p {
			continue
		}
		k.lastSeen[uid] = p
		if w := k.workers[uid]; w != nil {
			w.wake()
		} else if k.synced {
			k.log.Info("Stopping orphaned pod", "podUID", uid)
			w := newPodWorker(uid)
			w.remove()
			k.workers[uid] = w
			go k.runWorker(ctx, w)
		}
	}
	for uid := range k.lastSeen {
		if _, ok := prints[uid]; !ok {
			delete(k.lastSeen, uid)
			if w := k.workers[uid]; w != nil {
				w.wake()
			}
		}
	}
}

// containersDigest sums a hash of each container's ID and state, so that
// it does not depend on the runtime's listing order.
func containersDigest(containers []crilist.Entry) uint64 {
	var sum uint64
	for _, c := range containers {
		h := fnv.New64a()
		h.Write([]byte(c.ID))
		h.Write([]byte{byte(c.State)})
		sum += h.Sum64()
	}
	return sum
}

// sandboxEntry and containerEntry are one sandbox's and one container's
// part of a pod's fingerprint.
func sandboxEntry(id string, state runtimeapi.PodSandboxState) string {
	return "s" + id + "=" + state.String()
}

func containerEntry(id string, state runtimeapi.ContainerState) string {
	return "c" + id + "=" + state.String()
}

// fingerprint is what relist compares to tell that a pod's sandboxes or
// containers changed: their IDs and states, in an order that does not
// depend on the runtime's listing order.
func fingerprint(entries []string) string {
	slices.Sort(entries)
	return strings.Join(entries, ";")
}

// observed records the pod's runtime state as its worker last read it, so
// that relist wakes the worker only for changes it has not seen (such as
// the containers it has just started itself).
func (k *Kubelet) observed(uid types.UID, rt *podRuntime) {
	entries := make([]string, 0, len(rt.sandboxes)+len(rt.containers))
	for _, s := range rt.sandboxes {
		entries = append(entries, sandboxEntry(s.Id, s.State))
	}
	for _, c := range rt.containers {
		entries = append(entries, containerEntry(c.Id, c.State))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(entries) == 0 {
		if _, ok := k.lastSeen[uid]; ok {
			delete(k.lastSeen, uid)
			k.sandboxesChanged.Store(true)
		}
		return
	}
	if p := fingerprint(entries); p != k.lastSeen[uid] {
		// The worker changed the pod, perhaps its sandbox: the next
		// relist lists sandboxes afresh.
		k.lastSeen[uid] = p
		k.sandboxesChanged.Store(true)
	}
}

// sandboxSlotPatience is how long a pod waits for a sandbox slot before
// creating its sandbox anyway: the slots order a burst, they must not let
// a runtime stuck on a few sandboxes hold up every other pod.
const sandboxSlotPatience = 30 * time.Second

// acquireSandboxSlot waits for a turn to create a sandbox and returns
// what gives it back (a no-op once the wait outlasted
// sandboxSlotPatience). It gives up, returning nil, when ctx ends or when
// the pod's sources delete or remove it meanwhile (the worker then syncs
// again at once).
func (k *Kubelet) acquireSandboxSlot(ctx context.Context, w *podWorker) func() {
	woken := false
	patience := time.NewTimer(sandboxSlotPatience)
	defer patience.Stop()
	defer func() {
		if woken {
			// The pod changed while it waited: sync it again after this.
			w.wake()
		}
	}()
	for {
		select {
		case k.sandboxSlots <- struct{}{}:
			return sync.OnceFunc(func() { <-k.sandboxSlots })
		case <-patience.C:
			logr.FromContextOrDiscard(ctx).Info("Creating the pod sandbox without waiting further for a slot", "waited", sandboxSlotPatience)
			return func() {}
		case <-ctx.Done():
			return nil
		case <-w.wakeCh:
			woken = true
			pod, removed := w.snapshot()
			if removed || pod == nil || pod.DeletionTimestamp != nil {
				return nil
			}
		}
	}
}

// retryAfter is how soon a pod whose sync failed n times in a row is synced
// again: 250 ms doubled per failure, at most 2 s. Most first failures pass
// at once, such as a token the apiserver's node authorizer refuses until
// its cache has seen the pod bound to this node, which a kubelet watching
// the same pods can see first.
func retryAfter(n int) time.Duration {
	return min(250*time.Millisecond<<min(n-1, 3), 2*time.Second)
}

// runWorker syncs one pod until it is gone from its sources and from the
// runtime.
func (k *Kubelet) runWorker(ctx context.Context, w *podWorker) {
	log, named := k.log.WithValues("podUID", w.uid), false
	// Whoever starts a worker wakes it (update or remove): a timer firing
	// at once could sync before the pod is handed over, as if it had none.
	timer := time.NewTimer(k.cfg.ResyncPeriod)
	defer timer.Stop()
	failures := 0 // consecutive failed syncs
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wakeCh:
		case <-timer.C:
		}
		pod, removed := w.snapshot()
		if pod != nil && !named {
			// A UID's pod keeps its name: the logger (whose fields zap
			// encodes when it is made) is built once.
			log, named = k.log.WithValues("pod", types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}), true
		}
		w.mu.Lock()
		steps := w.steps
		w.mu.Unlock()
		steps.step("wait")
		requeue, done, err := k.syncPod(withStartSteps(logr.NewContext(ctx, log), steps), w, pod, removed)
		if err != nil {
			metrics.SyncErrors.Inc()
			log.Error(err, "Sync pod failed")
			failures++
			if retry := retryAfter(failures); requeue == 0 || requeue > retry {
				requeue = retry
			}
		} else {
			failures = 0
		}
		if done {
			k.mu.Lock()
			// A source may have named the pod again while it was torn down.
			if _, removed := w.snapshot(); removed {
				delete(k.workers, w.uid)
				k.mu.Unlock()
				k.cfg.Prober.RemovePod(w.uid)
				log.V(2).Info("Pod worker finished")
				return
			}
			k.mu.Unlock()
		}
		if requeue <= 0 || requeue > k.cfg.ResyncPeriod {
			requeue = k.cfg.ResyncPeriod
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(requeue)
	}
}

// podWorker is one pod's desired state, as its sources last gave it.
type podWorker struct {
	uid    types.UID
	wakeCh chan struct{}

	mu      sync.Mutex
	pod     *corev1.Pod
	removed bool
	// status is the status last written to the apiserver; writing the
	// one being written, nil between writes.
	status, writing *corev1.PodStatus
	// unwritten says status is not in the apiserver after all: a static
	// pod's mirror pod was missing, or has been created since, empty.
	unwritten bool
	// startErr holds, by container name, why its last start failed.
	startErr map[string]podstatus.Waiting
	// started is when the worker first saw the pod.
	started time.Time
	// finished is set once a pod's containers are all stopped for good.
	finished bool
	// startObserved is set once the pod's start-up time is recorded.
	startObserved bool
	// steps times the pod's start-up until startObserved; nil for
	// orphans and after start-up.
	steps *startSteps
	// evicted is the eviction message once the pod is evicted.
	evicted string
	// rejected is why the kubelet refused to run the pod, nil for a pod
	// it admitted; set once, when the worker is made.
	rejected *rejection
	// resize is the pod's in-place resize bookkeeping.
	resize resizeState
}

func newPodWorker(uid types.UID) *podWorker {
	return &podWorker{uid: uid, wakeCh: make(chan struct{}, 1), startErr: map[string]podstatus.Waiting{}, started: time.Now()}
}

func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.removed = false
	w.mu.Unlock()
	w.wake()
}

// written returns the status the worker is writing or last wrote, nil
// before its first.
func (w *podWorker) written() *corev1.PodStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writing != nil {
		return w.writing
	}
	return w.status
}

// replace stores a newer version of the pod without waking the worker.
func (w *podWorker) replace(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.mu.Unlock()
}

func (w *podWorker) remove() {
	w.mu.Lock()
	w.removed = true
	w.mu.Unlock()
	w.wake()
}

func (w *podWorker) wake() {
	select {
	case w.wakeCh <- struct{}{}:
	default:
	}
}

func (w *podWorker) snapshot() (*corev1.Pod, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod, w.removed
}

// current returns the pod with the status last computed for it.
func (w *podWorker) current() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pod == nil || w.removed {
		return nil
	}
	p := w.pod.DeepCopy()
	if w.status != nil {
		p.Status = *w.status.DeepCopy()
	}
	return p
}

// podRuntime is what the runtime holds for one pod, newest first.
type podRuntime struct {
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.ContainerStatus
	// sandboxStatus is the newest sandbox's status, nil without one.
	sandboxStatus *runtimeapi.PodSandboxStatus
}

// readySandbox returns the newest sandbox when it is ready.
func (r *podRuntime) readySandbox() *runtimeapi.PodSandbox {
	if len(r.sandboxes) > 0 && r.sandboxes[0].State == runtimeapi.PodSandboxState_SANDBOX_READY {
		return r.sandboxes[0]
	}
	return nil
}

// latest returns the newest and the previous instance of the named
// container.
func (r *podRuntime) latest(name string) (cur, prev *runtimeapi.ContainerStatus) {
	return podstatus.Latest(r.containers, name)
}
