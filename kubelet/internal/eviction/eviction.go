// Package eviction watches the node's resources against the eviction
// thresholds as upstream's eviction manager does: the signals
// memory.available, nodefs.available, nodefs.inodesFree,
// imagefs.available, imagefs.inodesFree and pid.available, observed from
// the host; a met threshold puts the node under MemoryPressure,
// DiskPressure or PIDPressure (held for the pressure transition period
// after it clears); under a hard threshold the node reclaims what it can
// (unused images for disk) and then evicts one pod per pass, ranked as
// upstream ranks them.
package eviction

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// Signal names an eviction signal.
type Signal string

// The signals upstream's kubelet knows on Linux.
const (
	MemoryAvailable    Signal = "memory.available"
	NodeFsAvailable    Signal = "nodefs.available"
	NodeFsInodesFree   Signal = "nodefs.inodesFree"
	ImageFsAvailable   Signal = "imagefs.available"
	ImageFsInodesFree  Signal = "imagefs.inodesFree"
	PIDAvailable       Signal = "pid.available"
	systemCriticalPrio        = int32(2000000000)
)

// Observation is a signal's available amount and the capacity it is out
// of (for percentage thresholds).
type Observation struct {
	Available, Capacity int64
}

// Threshold is "signal < quantity" or "signal < percentage of capacity".
type Threshold struct {
	Signal     Signal
	Quantity   *resource.Quantity
	Percentage float64
}

// ParseThresholds reads a KubeletConfiguration evictionHard map.
func ParseThresholds(m map[string]string) ([]Threshold, error) {
	var out []Threshold
	for k, v := range m {
		t := Threshold{Signal: Signal(k)}
		if p, ok := strings.CutSuffix(v, "%"); ok {
			var f float64
			if _, err := fmt.Sscanf(p, "%g", &f); err != nil || f < 0 || f > 100 {
				return nil, fmt.Errorf("eviction threshold %s=%s: bad percentage", k, v)
			}
			t.Percentage = f / 100
		} else {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("eviction threshold %s=%s: %w", k, v, err)
			}
			t.Quantity = &q
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Signal < out[j].Signal })
	return out, nil
}

// value is the threshold's amount against capacity.
func (t Threshold) value(capacity int64) int64 {
	if t.Quantity != nil {
		return t.Quantity.Value()
	}
	return int64(t.Percentage * float64(capacity))
}

// Met reports whether obs is below the threshold.
func (t Threshold) Met(obs Observation) bool {
	return obs.Available < t.value(obs.Capacity)
}

// PodUsage is what a pod uses, for ranking.
type PodUsage struct {
	Memory, Disk int64
}

// Config is what the manager watches and acts with.
type Config struct {
	Thresholds []Threshold
	// TransitionPeriod holds a pressure condition after its threshold
	// clears (evictionPressureTransitionPeriod).
	TransitionPeriod time.Duration
	// Observe measures the signals.
	Observe func(ctx context.Context) (map[Signal]Observation, error)
	// Pods are the pods the kubelet runs; Usage their use.
	Pods  func() []*corev1.Pod
	Usage func(ctx context.Context) (map[types.UID]PodUsage, error)
	// Evict stops a pod as Evicted with message.
	Evict func(uid types.UID, message string) bool
	// ReclaimImages frees image file system space (unused images) and
	// returns the bytes freed; nil skips node-level reclaim.
	ReclaimImages func(ctx context.Context, bytes int64) (int64, error)
	Now           func() time.Time
}

// Manager runs the thresholds; Pressure gives the node conditions.
type Manager struct {
	cfg Config
	log logr.Logger

	mu       sync.Mutex
	lastMet  map[Signal]time.Time
	observed map[Signal]Observation
}

// New returns a manager.
func New(cfg Config, log logr.Logger) *Manager {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{cfg: cfg, log: log, lastMet: map[Signal]time.Time{}}
}

// Run synchronizes every period until ctx ends.
func (m *Manager) Run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if _, err := m.Synchronize(ctx); err != nil && ctx.Err() == nil {
			m.log.Error(err, "Eviction pass failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pressure reports the node's MemoryPressure, DiskPressure and
// PIDPressure: a threshold of theirs met within the transition period.
func (m *Manager) Pressure() (memory, disk, pid bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now()
	under := func(s Signal) bool {
		t, ok := m.lastMet[s]
		return ok && now.Sub(t) <= m.cfg.TransitionPeriod
	}
	return under(MemoryAvailable),
		under(NodeFsAvailable) || under(NodeFsInodesFree) || under(ImageFsAvailable) || under(ImageFsInodesFree),
		under(PIDAvailable)
}

// Synchronize observes the signals once, records which thresholds are
// met and, under one, reclaims or evicts one pod. It returns the evicted
// pod's UID, if any.
func (m *Manager) Synchronize(ctx context.Context) (types.UID, error) {
	obs, err := m.cfg.Observe(ctx)
	if err != nil {
		return "", fmt.Errorf("observe eviction signals: %w", err)
	}
	now := m.cfg.Now()
	var met []Threshold
	for _, t := range m.cfg.Thresholds {
		o, ok := obs[t.Signal]
		if ok && t.Met(o) {
			met = append(met, t)
		}
	}
	m.mu.Lock()
	m.observed = obs
	for _, t := range met {
		m.lastMet[t.Signal] = now
	}
	m.mu.Unlock()
	if len(met) == 0 {
		return "", nil
	}
	// Memory first, then disk, then PIDs, as upstream orders signals.
	sort.SliceStable(met, func(i, j int) bool { return signalOrder(met[i].Signal) < signalOrder(met[j].Signal) })
	t := met[0]
	o := obs[t.Signal]
	m.log.Info("Eviction threshold met", "signal", t.Signal, "available", o.Available, "threshold", t.value(o.Capacity))
	if isImageFs(t.Signal) && m.cfg.ReclaimImages != nil {
		need := t.value(o.Capacity) - o.Available
		freed, err := m.cfg.ReclaimImages(ctx, need)
		if err != nil {
			m.log.Error(err, "Reclaim unused images failed")
		}
		if freed >= need && t.Signal == ImageFsAvailable {
			m.log.Info("Reclaimed enough image space; no eviction", "freed", freed)
			return "", nil
		}
	}
	usage, err := m.cfg.Usage(ctx)
	if err != nil {
		return "", fmt.Errorf("pod usage: %w", err)
	}
	pods := Rank(t.Signal, m.cfg.Pods(), usage)
	for _, pod := range pods {
		msg := Message(t, o, pod, usage[pod.UID])
		if m.cfg.Evict(pod.UID, msg) {
			m.log.Info("Evicted pod", "pod", pod.Namespace+"/"+pod.Name, "signal", t.Signal)
			return pod.UID, nil
		}
	}
	m.log.Info("No pod to evict", "signal", t.Signal)
	return "", nil
}

func signalOrder(s Signal) int {
	switch s {
	case MemoryAvailable:
		return 0
	case PIDAvailable:
		return 2
	}
	return 1
}

func isImageFs(s Signal) bool { return s == ImageFsAvailable || s == ImageFsInodesFree }

// resourceOf is the resource a signal is about.
func resourceOf(s Signal) corev1.ResourceName {
	switch s {
	case MemoryAvailable:
		return corev1.ResourceMemory
	case PIDAvailable:
		return "pids"
	}
	return corev1.ResourceEphemeralStorage
}

// Critical pods are never evicted: static and mirror pods and those at
// system-critical priority or above, as upstream.
func Critical(pod *corev1.Pod) bool {
	if pod.Annotations["kubernetes.io/config.source"] != "" && pod.Annotations["kubernetes.io/config.source"] != "api" {
		return true
	}
	if _, ok := pod.Annotations["kubernetes.io/config.mirror"]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPrio
}

func requests(pod *corev1.Pod, name corev1.ResourceName) int64 {
	var sum int64
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[name]; ok {
			sum += q.Value()
		}
	}
	return sum
}

func priority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// Rank orders the pods that may be evicted for signal, first to go
// first: for memory and disk, pods using more than they request, then
// lower priority, then the most use above request; for PIDs, lower
// priority (upstream then orders by process count, which CRI does not
// report here).
func Rank(signal Signal, pods []*corev1.Pod, usage map[types.UID]PodUsage) []*corev1.Pod {
	name := resourceOf(signal)
	use := func(p *corev1.Pod) int64 {
		if name == corev1.ResourceMemory {
			return usage[p.UID].Memory
		}
		return usage[p.UID].Disk
	}
	var out []*corev1.Pod
	for _, p := range pods {
		if !Critical(p) && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if name != "pids" {
			ea, eb := use(a) > requests(a, name), use(b) > requests(b, name)
			if ea != eb {
				return ea
			}
		}
		if pa, pb := priority(a), priority(b); pa != pb {
			return pa < pb
		}
		if name == "pids" {
			return false
		}
		return use(a)-requests(a, name) > use(b)-requests(b, name)
	})
	return out
}

// Message is the Evicted status message, worded as upstream's.
func Message(t Threshold, o Observation, pod *corev1.Pod, u PodUsage) string {
	name := resourceOf(t.Signal)
	msg := fmt.Sprintf("The node was low on resource: %s. Threshold quantity: %s, available: %s. ",
		name, quantity(t.value(o.Capacity), name), quantity(o.Available, name))
	if name == "pids" {
		return strings.TrimSpace(msg)
	}
	use := u.Memory
	if name != corev1.ResourceMemory {
		use = u.Disk
	}
	return msg + fmt.Sprintf("Pod %s was using %s, request is %s, has larger consumption of %s.",
		pod.Name, quantity(use, name), quantity(requests(pod, name), name), name)
}

func quantity(v int64, name corev1.ResourceName) string {
	if name == "pids" {
		return fmt.Sprint(v)
	}
	return resource.NewQuantity(v, resource.BinarySI).String()
}
