package events_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"trireme.dev/api/events"
	"trireme.dev/api/scheme"
)

func sample() *eventsv1.Event {
	now := metav1.NewMicroTime(metav1.Now().Rfc3339Copy().Time)
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "e", Namespace: "ns"},
		EventTime:           now,
		Series:              &eventsv1.EventSeries{Count: 3, LastObservedTime: now},
		ReportingController: "ctl",
		ReportingInstance:   "ctl-1",
		Action:              "Bind",
		Reason:              "Scheduled",
		Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"},
		Related:             &corev1.ObjectReference{Kind: "Node", Name: "n"},
		Note:                "assigned",
		Type:                corev1.EventTypeNormal,
		DeprecatedSource:    corev1.EventSource{Component: "c"},
		DeprecatedCount:     3,
	}
}

func TestEventsV1RoundTripsThroughHub(t *testing.T) {
	in := sample()
	hub := &events.Event{}
	events.FromEventsV1(in, hub)
	if hub.Message != in.Note || hub.InvolvedObject != in.Regarding || hub.ReportingController != in.ReportingController {
		t.Fatalf("hub lost fields: %+v", hub)
	}
	out := &eventsv1.Event{}
	events.ToEventsV1(hub, out)
	if !equality.Semantic.DeepEqual(in, out) {
		t.Errorf("round trip changed the event:\n in %+v\nout %+v", in, out)
	}
}

func TestSchemeConvertsBetweenGroups(t *testing.T) {
	obj, err := scheme.Scheme.ConvertToVersion(sample(), schema.GroupVersion{Group: eventsv1.GroupName, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("to hub: %v", err)
	}
	hub, ok := obj.(*events.Event)
	if !ok {
		t.Fatalf("hub is %T", obj)
	}
	core := &corev1.Event{}
	if err := scheme.Scheme.Convert(hub, core, nil); err != nil {
		t.Fatalf("to core/v1: %v", err)
	}
	if core.Message != "assigned" || core.InvolvedObject.Name != "p" || core.Source.Component != "c" {
		t.Errorf("core/v1 view: %+v", core)
	}
}
