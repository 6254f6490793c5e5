package staticpod

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"trireme.dev/componentbase/testwait"
)

type sink struct {
	mu   sync.Mutex
	pods map[types.UID]*corev1.Pod
}

func (s *sink) UpsertPod(_ context.Context, p *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods[p.UID] = p
}

func (s *sink) RemovePod(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, uid)
}

const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - name: etcd
    image: trireme.dev/etcd:v1
`

func TestSource(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etcd.yaml", manifest)
	write("broken.yaml", "kind: Pod\nspec: [")
	write(".hidden.swp", "junk")
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}})
	s := &sink{pods: map[types.UID]*corev1.Pod{}}
	src := New(dir, "node-1", client, s, time.Hour, logr.Discard())
	ctx := context.Background()
	src.sync(ctx)
	if len(s.pods) != 1 {
		t.Fatalf("%d pods, want the one valid manifest", len(s.pods))
	}
	var pod *corev1.Pod
	for _, p := range s.pods {
		pod = p
	}
	if pod.Name != "etcd-node-1" || pod.Namespace != "kube-system" || pod.Spec.NodeName != "node-1" || pod.Annotations[AnnotationSource] != "file" {
		t.Errorf("static pod identity: %s/%s node %s annotations %v", pod.Namespace, pod.Name, pod.Spec.NodeName, pod.Annotations)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("static pod not defaulted: restartPolicy %q", pod.Spec.RestartPolicy)
	}
	src.syncMirrors(ctx)
	mirror, err := client.CoreV1().Pods("kube-system").Get(ctx, "etcd-node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !IsMirror(mirror) || mirror.OwnerReferences[0].Kind != "Node" {
		t.Errorf("mirror pod %v", mirror.ObjectMeta)
	}
	oldUID := pod.UID
	write("etcd.yaml", manifest+"  hostNetwork: true\n")
	src.sync(ctx)
	if _, ok := s.pods[oldUID]; ok || len(s.pods) != 1 {
		t.Errorf("changed manifest did not replace the pod: %d pods", len(s.pods))
	}
	os.Remove(filepath.Join(dir, "etcd.yaml"))
	src.sync(ctx)
	if len(s.pods) != 0 {
		t.Errorf("removed manifest still runs")
	}
}

// TestMirrorsFromLister: with the node's pods in a lister, a period in
// which the mirrors are as they should be asks the apiserver nothing, and
// a stale mirror is deleted without listing.
func TestMirrorsFromLister(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "etcd.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}})
	s := &sink{pods: map[types.UID]*corev1.Pod{}}
	src := New(dir, "node-1", client, s, time.Hour, logr.Discard())
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	src.UseLister(corelisters.NewPodLister(indexer))
	ctx := context.Background()
	src.sync(ctx)

	// First period: no mirror in the cache yet, so one is created.
	src.syncMirrors(ctx)
	mirror, err := client.CoreV1().Pods("kube-system").Get(ctx, "etcd-node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("mirror pod not created: %v", err)
	}
	stale := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "old-node-1", Namespace: "kube-system", UID: "old",
		Annotations: map[string]string{AnnotationMirror: "gone", AnnotationSource: "file"}}, Spec: corev1.PodSpec{NodeName: "node-1"}}
	if _, err := client.CoreV1().Pods("kube-system").Create(ctx, stale, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{mirror, stale} {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	// The informer sees the deletion before the second period.
	removeStale := func() {
		if err := indexer.Delete(stale); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		want  []string
		after func()
	}{
		{name: "stale mirror", want: []string{"delete"}, after: removeStale},
		{name: "mirrors as they should be", want: nil, after: func() {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client.ClearActions()
			src.syncMirrors(ctx)
			var got []string
			for _, a := range client.Actions() {
				got = append(got, a.GetVerb())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("API calls %v, want %v", got, tt.want)
			}
		})
		tt.after()
	}
}

// TestRunSeesEditsAtOnce: a manifest written, edited or removed is read
// when the directory changes, not at the next period (an hour here), as
// upstream's kubelet watches its static pod path.
func TestRunSeesEditsAtOnce(t *testing.T) {
	dir := t.TempDir()
	s := &sink{pods: map[types.UID]*corev1.Pod{}}
	src := New(dir, "node-1", nil, s, time.Hour, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)
	if !src.WaitSynced(ctx) {
		t.Fatal("no first read")
	}
	images := func() []string {
		s.mu.Lock()
		defer s.mu.Unlock()
		var out []string
		for _, p := range s.pods {
			out = append(out, p.Spec.Containers[0].Image)
		}
		return out
	}
	write := func(content string) {
		t.Helper()
		// As triremeadm writes manifests: a dot file renamed into place.
		tmp := filepath.Join(dir, ".etcd.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "etcd.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	write(manifest)
	testwait.ForTrue(t, 10*time.Second, "the new manifest's pod", func() bool { return slices.Equal(images(), []string{"trireme.dev/etcd:v1"}) })
	write(strings.Replace(manifest, "etcd:v1", "etcd:v2", 1))
	testwait.ForTrue(t, 10*time.Second, "the edited manifest's pod alone", func() bool { return slices.Equal(images(), []string{"trireme.dev/etcd:v2"}) })
	if err := os.Remove(filepath.Join(dir, "etcd.yaml")); err != nil {
		t.Fatal(err)
	}
	testwait.ForTrue(t, 10*time.Second, "no pod", func() bool { return len(images()) == 0 })
}
