// Package staticpod is the file pod source: it reads pod manifests from a
// directory (or one file), hands them to the kubelet — they run even with
// no apiserver — and keeps a mirror pod for each in the API, as
// upstream's kubelet does.
package staticpod

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/api/defaults"
)

// Annotations upstream's kubelet puts on static and mirror pods.
const (
	AnnotationSource = "kubernetes.io/config.source"
	AnnotationHash   = "kubernetes.io/config.hash"
	AnnotationSeen   = "kubernetes.io/config.seen"
	AnnotationMirror = "kubernetes.io/config.mirror"
)

// IsMirror reports whether pod is a mirror of a static pod.
func IsMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[AnnotationMirror]
	return ok
}

// Sink receives the static pods.
type Sink interface {
	UpsertPod(ctx context.Context, pod *corev1.Pod)
	RemovePod(uid types.UID)
}

// Source polls a manifest path.
type Source struct {
	path     string
	nodeName string
	client   kubernetes.Interface
	sink     Sink
	period   time.Duration
	log      logr.Logger

	// lister, when set, holds the pods bound to the node (the kubelet's
	// own informer's): mirror pods are looked up there rather than
	// listed from the apiserver every period.
	lister corelisters.PodLister

	mu     sync.Mutex
	pods   map[types.UID]*corev1.Pod
	synced chan struct{}
	once   sync.Once
}

// New returns a source reading path every period.
func New(path, nodeName string, client kubernetes.Interface, sink Sink, period time.Duration, log logr.Logger) *Source {
	if period <= 0 {
		period = 20 * time.Second
	}
	return &Source{path: path, nodeName: nodeName, client: client, sink: sink, period: period, log: log,
		pods: map[types.UID]*corev1.Pod{}, synced: make(chan struct{})}
}

// UseLister makes the source look mirror pods up in l, a lister of the
// pods bound to this node, instead of asking the apiserver every period:
// with a short period and many pods on the node, those lists were most
// of an idle kubelet's CPU (and of the apiserver's for it).
func (s *Source) UseLister(l corelisters.PodLister) {
	s.lister = l
}

// WaitSynced waits for the first read of the manifests.
func (s *Source) WaitSynced(ctx context.Context) bool {
	select {
	case <-s.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// Run reads the manifests every period, and at once when the manifest path
// changes (inotify, as upstream's kubelet watches it), and keeps the mirror
// pods until ctx ends.
func (s *Source) Run(ctx context.Context) {
	changes := s.watch(ctx)
	tick := time.NewTicker(min(s.period, mirrorRetryPeriod))
	defer tick.Stop()
	var read, mirrored time.Time
	pending, edited := false, false
	for {
		// The manifests are read every period and after an edit. A mirror
		// pod not yet in place (the old one of a changed manifest still
		// being deleted, the node not registered yet) is tried again every
		// mirrorRetryPeriod, without reading them: an upgrade waits for
		// each replaced static pod's mirror.
		changed, due := false, edited || time.Since(read) >= s.period
		if due {
			read = time.Now()
			changed = s.sync(ctx)
			s.once.Do(func() { close(s.synced) })
		}
		// Mirrors are checked when the manifests changed, and otherwise
		// at most every mirrorCheckPeriod: with a short period and many
		// pods on the node, checking every period was a tenth of an idle
		// kubelet's CPU. mirrored is zero (long past) until a check
		// leaves every mirror in place.
		if s.client != nil && (pending || due && (changed || time.Since(mirrored) >= max(s.period, mirrorCheckPeriod))) {
			mirrored = time.Time{}
			pending = !s.syncMirrors(ctx)
			if !pending {
				mirrored = time.Now()
			}
		}
		edited = false
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-changes:
			edited = true
		}
	}
}

// settleTime is how long the manifest path must be quiet after a change
// before it is read: a manifest written in several steps is read whole.
const settleTime = 100 * time.Millisecond

// watch returns a channel that receives once the manifest path has changed
// and then been quiet for settleTime. The watch is in place when it
// returns, before Run's first read, so no edit falls between the two. While
// the path cannot be watched (it does not exist yet), it tries again every
// period; the periodic read covers the meantime.
func (s *Source) watch(ctx context.Context) <-chan struct{} {
	out := make(chan struct{}, 1)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Error(err, "Watching the static pod path failed; reading it every period only", "path", s.path)
		return out
	}
	watching := w.Add(s.path) == nil
	go func() {
		defer w.Close()
		for !watching {
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.period):
			}
			watching = w.Add(s.path) == nil
		}
		settle := time.NewTimer(time.Hour)
		settle.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				settle.Reset(settleTime)
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				s.log.Error(err, "Watching the static pod path", "path", s.path)
			case <-settle.C:
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}

// mirrorCheckPeriod is the longest a mirror pod deleted through the API
// waits to be created again, unless the manifests are read less often.
const mirrorCheckPeriod = 10 * time.Second

// mirrorRetryPeriod is how soon a mirror pod that could not be put in
// place is tried again.
const mirrorRetryPeriod = time.Second

// sync reads the manifests and hands what changed to the sink; it reports
// whether anything did.
func (s *Source) sync(ctx context.Context) bool {
	found := map[types.UID]*corev1.Pod{}
	for _, file := range s.files() {
		pod, err := s.read(file)
		if err != nil {
			s.log.Error(err, "Skipping static pod manifest", "file", file)
			continue
		}
		found[pod.UID] = pod
	}
	s.mu.Lock()
	old := s.pods
	s.pods = found
	s.mu.Unlock()
	changed := false
	for uid, pod := range found {
		if _, ok := old[uid]; !ok {
			s.log.Info("Static pod added", "pod", pod.Namespace+"/"+pod.Name, "uid", uid)
			s.sink.UpsertPod(ctx, pod)
			changed = true
		}
	}
	for uid, pod := range old {
		if _, ok := found[uid]; !ok {
			s.log.Info("Static pod removed", "pod", pod.Namespace+"/"+pod.Name, "uid", uid)
			s.sink.RemovePod(uid)
			changed = true
		}
	}
	return changed
}

func (s *Source) files() []string {
	fi, err := os.Stat(s.path)
	if err != nil {
		if !os.IsNotExist(err) {
			s.log.Error(err, "Read static pod path failed")
		}
		return nil
	}
	if !fi.IsDir() {
		return []string{s.path}
	}
	entries, err := os.ReadDir(s.path)
	if err != nil {
		s.log.Error(err, "Read static pod directory failed")
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, filepath.Join(s.path, e.Name()))
	}
	sort.Strings(out)
	return out
}

// read decodes a manifest and gives it the identity upstream gives
// static pods: name suffixed with the node's, a UID hashed from the
// content and node, and the source annotations.
func (s *Source) read(file string) (*corev1.Pod, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("manifest holds %T, want a Pod", obj)
	}
	if pod.Name == "" {
		return nil, fmt.Errorf("pod has no name")
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, fmt.Errorf("pod has no containers")
	}
	defaults.Pod(pod)
	sum := sha256.New()
	sum.Write(data)
	sum.Write([]byte(s.nodeName))
	hash := hex.EncodeToString(sum.Sum(nil))[:32]
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Name = pod.Name + "-" + s.nodeName
	pod.UID = types.UID(hash)
	pod.Spec.NodeName = s.nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationSource] = "file"
	pod.Annotations[AnnotationHash] = hash
	pod.Annotations[AnnotationSeen] = time.Now().Format(time.RFC3339Nano)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	return pod, nil
}

// syncMirrors makes the API hold one mirror pod per static pod, of the
// current content, and no stale ones.
func (s *Source) syncMirrors(ctx context.Context) (done bool) {
	s.mu.Lock()
	pods := make([]*corev1.Pod, 0, len(s.pods))
	for _, p := range s.pods {
		pods = append(pods, p)
	}
	s.mu.Unlock()
	done = s.removeStaleMirrors(ctx, pods)
	var node *corev1.Node
	for _, pod := range pods {
		pods := s.client.CoreV1().Pods(pod.Namespace)
		existing, err := s.getPod(ctx, pod.Namespace, pod.Name)
		switch {
		case err == nil && existing.Annotations[AnnotationMirror] == pod.Annotations[AnnotationHash] && existing.DeletionTimestamp == nil:
			continue
		case err == nil:
			if !IsMirror(existing) {
				s.log.Info("A pod that is not a mirror holds the static pod's name", "pod", pod.Namespace+"/"+pod.Name)
				continue
			}
			if existing.DeletionTimestamp != nil {
				// Made again once it is gone.
				done = false
				continue
			}
			if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &existing.UID}}); err != nil && !apierrors.IsNotFound(err) {
				s.log.Error(err, "Delete stale mirror pod failed", "pod", pod.Namespace+"/"+pod.Name)
				done = false
				continue
			}
		case !apierrors.IsNotFound(err):
			s.log.Error(err, "Get mirror pod failed", "pod", pod.Namespace+"/"+pod.Name)
			done = false
			continue
		}
		if node == nil {
			// The mirror's owner is the node, by UID.
			if node, err = s.client.CoreV1().Nodes().Get(ctx, s.nodeName, metav1.GetOptions{}); err != nil {
				s.log.V(2).Info("Mirror pods wait for the node", "err", err.Error())
				return false
			}
		}
		mirror := pod.DeepCopy()
		mirror.UID = ""
		mirror.ResourceVersion = ""
		mirror.Annotations[AnnotationMirror] = pod.Annotations[AnnotationHash]
		mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true)}}
		mirror.Status = corev1.PodStatus{}
		if _, err := pods.Create(ctx, mirror, metav1.CreateOptions{}); err != nil {
			// AlreadyExists: the lister has not seen it yet, or the old
			// mirror is still being deleted.
			if apierrors.IsAlreadyExists(err) {
				s.log.V(2).Info("Mirror pod not created yet", "pod", pod.Namespace+"/"+pod.Name, "err", err.Error())
			} else {
				s.log.Error(err, "Create mirror pod failed", "pod", pod.Namespace+"/"+pod.Name)
			}
			done = false
			continue
		}
		s.log.Info("Created mirror pod", "pod", pod.Namespace+"/"+pod.Name)
	}
	return done
}

// removeStaleMirrors deletes the mirror pods on this node whose static pod
// is gone.
func (s *Source) removeStaleMirrors(ctx context.Context, static []*corev1.Pod) (done bool) {
	hashes := map[string]bool{}
	for _, p := range static {
		hashes[p.Annotations[AnnotationHash]] = true
	}
	list, err := s.podsOnNode(ctx)
	if err != nil {
		s.log.Error(err, "List mirror pods failed")
		return false
	}
	done = true
	for _, p := range list {
		if !IsMirror(p) || hashes[p.Annotations[AnnotationMirror]] || p.DeletionTimestamp != nil {
			continue
		}
		err := s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			s.log.Error(err, "Delete stale mirror pod failed", "pod", p.Namespace+"/"+p.Name)
			done = false
			continue
		}
		s.log.Info("Deleted mirror pod of a removed static pod", "pod", p.Namespace+"/"+p.Name)
	}
	return done
}

// podsOnNode returns the pods bound to the node, from the lister if the
// source has one.
func (s *Source) podsOnNode(ctx context.Context) ([]*corev1.Pod, error) {
	if s.lister != nil {
		return s.lister.List(labels.Everything())
	}
	list, err := s.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", s.nodeName).String(),
	})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// getPod returns the named pod bound to the node, from the lister if the
// source has one; a pod of that name bound elsewhere is not found there.
func (s *Source) getPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if s.lister != nil {
		return s.lister.Pods(namespace).Get(name)
	}
	return s.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}
