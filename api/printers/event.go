package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"trireme.dev/api/events"
)

var eventColumns = columns(
	col("Last Seen", typeString, corev1.Event{}.SwaggerDoc()["lastTimestamp"]),
	col("Type", typeString, corev1.Event{}.SwaggerDoc()["type"]),
	col("Reason", typeString, corev1.Event{}.SwaggerDoc()["reason"]),
	col("Object", typeString, corev1.Event{}.SwaggerDoc()["involvedObject"]),
	wide("Subobject", typeString, corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]),
	wide("Source", typeString, corev1.Event{}.SwaggerDoc()["source"]),
	col("Message", typeString, corev1.Event{}.SwaggerDoc()["message"]),
	wide("First Seen", typeString, corev1.Event{}.SwaggerDoc()["firstTimestamp"]),
	wide("Count", typeString, corev1.Event{}.SwaggerDoc()["count"]),
	asName(wide("Name", typeString, objectMetaDoc["name"])),
)

// eventCells prints an Event of either API group. Events written through
// events.k8s.io have no first/last timestamps or count, only an event time
// and maybe a series, so those stand in.
func eventCells(e *events.Event, now time.Time) []any {
	first := since(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = sinceMicro(e.EventTime, now)
	}
	last := since(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	switch {
	case e.Series != nil:
		last = sinceMicro(e.Series.LastObservedTime, now)
		count = e.Series.Count
	case count == 0:
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, e.InvolvedObject.Name)
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
		eventSource(e.Source, e.ReportingController, e.ReportingInstance), strings.TrimSpace(e.Message),
		first, int64(count), e.Name}
}

// eventSource is "component, host", falling back to the reporting
// controller and instance of events.k8s.io events.
func eventSource(src corev1.EventSource, controller, instance string) string {
	component, host := src.Component, src.Host
	if component == "" {
		component = controller
	}
	if host == "" {
		host = instance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}
