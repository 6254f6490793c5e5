package integration

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func newConfigMap(t *testing.T, ns string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(ns).Create(testContext(t), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("cm"), Labels: labels},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	return cm
}

func TestWatch(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	api := client.CoreV1().ConfigMaps(ns)

	t.Run("watch from a resourceVersion sees only later events", func(t *testing.T) {
		first := newConfigMap(t, ns, nil)
		second := newConfigMap(t, ns, nil)
		w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		evs := record(w).waitFor(t, func(evs []watch.Event) bool { return len(evs) >= 1 })
		cm, ok := evs[0].Object.(*corev1.ConfigMap)
		if evs[0].Type != watch.Added || !ok || cm.Name != second.Name {
			t.Errorf("first event = %s %v, want ADDED %s (created after the watch's resourceVersion)", evs[0].Type, evs[0].Object, second.Name)
		}
	})

	t.Run("label selector watch sees an object leave as DELETED", func(t *testing.T) {
		cm := newConfigMap(t, ns, map[string]string{"watched": "yes"})
		w, err := api.Watch(ctx, metav1.ListOptions{LabelSelector: "watched=yes", ResourceVersion: cm.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		cm.Labels["watched"] = "no"
		if _, err := api.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		evs := record(w).waitFor(t, func(evs []watch.Event) bool { return len(evs) >= 1 })
		if evs[0].Type != watch.Deleted {
			t.Errorf("object leaving the selector gave %s, want DELETED", evs[0].Type)
		}
	})

	t.Run("bookmarks before the watch times out", func(t *testing.T) {
		cm := newConfigMap(t, ns, nil)
		// The server sends a bookmark 2s before the watch's deadline.
		w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](4)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		rec := record(w)
		// Bookmarks carry only versions newer than the watch's: move the
		// resource's version on with a change the watch does not see.
		newConfigMap(t, newNamespace(t), nil)
		evs := rec.waitFor(t, func(evs []watch.Event) bool {
			return len(evs) > 0 && evs[len(evs)-1].Type == watch.Bookmark
		})
		b := evs[len(evs)-1].Object.(*corev1.ConfigMap)
		if b.ResourceVersion == "" || b.ResourceVersion == cm.ResourceVersion {
			t.Errorf("bookmark resourceVersion %q, want one newer than %s", b.ResourceVersion, cm.ResourceVersion)
		}
	})

	t.Run("watch list sends initial events then a bookmark", func(t *testing.T) {
		a, b := newConfigMap(t, ns, map[string]string{"initial": "yes"}), newConfigMap(t, ns, map[string]string{"initial": "yes"})
		w, err := api.Watch(ctx, metav1.ListOptions{
			LabelSelector:        "initial=yes",
			SendInitialEvents:    ptr.To(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		evs := record(w).waitFor(t, func(evs []watch.Event) bool {
			return len(evs) > 0 && evs[len(evs)-1].Type == watch.Bookmark
		})
		var added []string
		for _, ev := range evs[:len(evs)-1] {
			if ev.Type == watch.Added {
				added = append(added, ev.Object.(*corev1.ConfigMap).Name)
			}
		}
		if !sameSet(added, []string{a.Name, b.Name}) {
			t.Errorf("initial events added %v, want %s and %s", added, a.Name, b.Name)
		}
		mark := evs[len(evs)-1].Object.(*corev1.ConfigMap)
		if mark.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Errorf("bookmark annotations = %v, want %s=true", mark.Annotations, metav1.InitialEventsAnnotationKey)
		}
	})
}

func TestListResourceVersions(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	api := client.CoreV1().ConfigMaps(ns)
	before := newConfigMap(t, ns, nil)
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listRV := list.ResourceVersion
	newConfigMap(t, ns, nil)

	t.Run("NotOlderThan returns at least the state at the version", func(t *testing.T) {
		l, err := api.List(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) < 1 {
			t.Errorf("NotOlderThan list has %d items, want at least 1", len(l.Items))
		}
	})

	t.Run("Exact returns the state at the version", func(t *testing.T) {
		l, err := api.List(ctx, metav1.ListOptions{ResourceVersion: listRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != before.Name || l.ResourceVersion != listRV {
			t.Errorf("Exact list at %s: %d items at rv %s, want only %s at %s", listRV, len(l.Items), l.ResourceVersion, before.Name, listRV)
		}
	})

	t.Run("resourceVersion 0 serves from the cache", func(t *testing.T) {
		l, err := api.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) < 1 {
			t.Errorf("list at resourceVersion 0 has %d items", len(l.Items))
		}
	})

	t.Run("get at a resourceVersion", func(t *testing.T) {
		got, err := api.Get(ctx, before.Name, metav1.GetOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		if got.UID != before.UID {
			t.Errorf("get at resourceVersion 0 found uid %s, want %s", got.UID, before.UID)
		}
	})
}

// watchLineTimeout bounds how long a watch may take to print a change.
const watchLineTimeout = 30 * time.Second

// TestGetPodsWatchPrintsChanges checks `kubectl get pods -w` prints the
// initial list, then a line for each change, in upstream's columns.
func TestGetPodsWatchPrintsChanges(t *testing.T) {
	ns := newNamespace(t)
	wantStdout(t, kubectlOK(t, "-n", ns, "run", "first", "--image=busybox", "--restart=Never", "--", "sleep", "3600"), "pod/first created\n")

	w := kubectlCmd(shared, "-n", ns, "get", "pods", "-w").Start(t)
	fields := func(line string) []string { return strings.Fields(line) }
	header, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "NAME") })
	if err != nil {
		t.Fatal(err)
	}
	// Printing is checked apart from watching: a wrong header must not hide
	// whether changes arrive.
	if got := strings.Join(fields(header), " "); got != "NAME READY STATUS RESTARTS AGE" {
		t.Errorf("watch header = %q, want upstream's NAME READY STATUS RESTARTS AGE", header)
	}
	// first was there before the watch began: it comes from the initial list.
	if _, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "first ") }); err != nil {
		t.Fatal(err)
	}

	// second only exists after the list, so its line can only come from
	// the watch.
	wantStdout(t, kubectlOK(t, "-n", ns, "run", "second", "--image=busybox", "--restart=Never", "--", "sleep", "3600"), "pod/second created\n")
	line, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "second ") })
	if err != nil {
		t.Fatal(err)
	}
	if f := fields(line); len(f) != 5 || f[1] != "0/1" || f[2] != "Pending" || f[3] != "0" {
		t.Errorf("watch line for second = %q, want NAME 0/1 Pending 0 AGE", line)
	}

	// A modification shows up as another line for the same pod.
	kubectlOK(t, "-n", ns, "label", "pod", "first", "seen=yes")
	if _, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "first ") }); err != nil {
		t.Fatal(err)
	}
	if stderr := w.Stop(); stderr != "" {
		t.Errorf("kubectl get -w wrote to stderr:\n%s", stderr)
	}
}
