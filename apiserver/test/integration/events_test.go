package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEventsBothGroups checks that core/v1 and events.k8s.io/v1 Events are
// one store seen through two schemas, with fields mapped as upstream maps them.
func TestEventsBothGroups(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	coreAPI := client.CoreV1().Events(ns)
	eventsAPI := client.EventsV1().Events(ns)

	t.Run("watch through events.k8s.io sees a core create", func(t *testing.T) {
		list, err := eventsAPI.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := eventsAPI.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := sampleCoreEvent(ns).(*corev1.Event)
		ev.Name = uniqueName("watched-event")
		ev.InvolvedObject.Name = "pod-watched"
		if _, err := coreAPI.Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		evs := record(w).waitFor(t, func(evs []watch.Event) bool { return len(evs) >= 1 })
		got, ok := evs[0].Object.(*eventsv1.Event)
		if evs[0].Type != watch.Added || !ok || got.Name != ev.Name || got.Note != ev.Message {
			t.Errorf("events.k8s.io watch saw %s %T, want ADDED events.k8s.io/v1 Event %s with note set", evs[0].Type, evs[0].Object, ev.Name)
		}
		if err := coreAPI.Delete(ctx, ev.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("core event read through events.k8s.io", func(t *testing.T) {
		ev := sampleCoreEvent(ns).(*corev1.Event)
		ev.Name = uniqueName("core-event")
		ev.InvolvedObject.Name = "pod-core"
		created, err := coreAPI.Create(ctx, ev, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := eventsAPI.Get(ctx, ev.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get through events.k8s.io: %v", err)
		}
		if got.UID != created.UID || got.Note != ev.Message || got.Regarding.Name != "pod-core" || got.Regarding.Kind != "Pod" ||
			got.Reason != ev.Reason || got.Type != ev.Type || got.DeprecatedSource.Component != "kubelet" || got.DeprecatedCount != 1 {
			t.Errorf("events.k8s.io view = %+v, want note=message, regarding=involvedObject, deprecatedSource=source, deprecatedCount=count", got)
		}
	})

	t.Run("events.k8s.io event read through core", func(t *testing.T) {
		ev := sampleEventsV1Event(ns).(*eventsv1.Event)
		ev.Name = uniqueName("new-event")
		ev.Regarding.Name = "pod-new"
		ev.Related = &corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		ev.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(time.Now())}
		created, err := eventsAPI.Create(ctx, ev, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := coreAPI.Get(ctx, ev.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get through core: %v", err)
		}
		if got.UID != created.UID || got.Message != ev.Note || got.InvolvedObject.Name != "pod-new" || got.ReportingController != ev.ReportingController ||
			got.ReportingInstance != ev.ReportingInstance || got.Action != ev.Action || got.Related == nil || got.Related.Name != "node-1" ||
			got.Series == nil || got.Series.Count != 2 {
			t.Errorf("core view = %+v, want message=note, involvedObject=regarding, reporting fields, related and series kept", got)
		}
	})

	t.Run("each group lists the other's events", func(t *testing.T) {
		coreList, err := coreAPI.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		newList, err := eventsAPI.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(coreList.Items) < 2 || len(coreList.Items) != len(newList.Items) {
			t.Errorf("core lists %d events, events.k8s.io %d; want the same, at least 2", len(coreList.Items), len(newList.Items))
		}
	})

	t.Run("field selectors", func(t *testing.T) {
		for _, tc := range []struct {
			group, selector string
			want            int
		}{
			{"core", "involvedObject.name=pod-core", 1},
			{"core", "involvedObject.name=pod-new", 1},
			{"core", "involvedObject.kind=Pod,reason=Started", 1},
			{"core", "type=Normal", 2},
			{"core", "reportingComponent=trireme.dev/integration", 1},
			{"events.k8s.io", "regarding.name=pod-core", 1},
			{"events.k8s.io", "regarding.name=pod-new", 1},
			{"events.k8s.io", "reportingController=trireme.dev/integration", 1},
			{"events.k8s.io", "reason=Tested", 1},
		} {
			var n int
			var err error
			if tc.group == "core" {
				var l *corev1.EventList
				l, err = coreAPI.List(ctx, metav1.ListOptions{FieldSelector: tc.selector})
				if l != nil {
					n = len(l.Items)
				}
			} else {
				var l *eventsv1.EventList
				l, err = eventsAPI.List(ctx, metav1.ListOptions{FieldSelector: tc.selector})
				if l != nil {
					n = len(l.Items)
				}
			}
			if err != nil {
				t.Errorf("%s field selector %s: %v", tc.group, tc.selector, err)
				continue
			}
			if n != tc.want {
				t.Errorf("%s field selector %s listed %d, want %d", tc.group, tc.selector, n, tc.want)
			}
		}
	})
}
