package validation

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"trireme.dev/api/events"
)

// Length limits on the events.k8s.io fields, as upstream sets them.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

func init() {
	// The hub is written through both groups. Without the request version
	// the lenient core/v1 rules apply; the registry calls ValidateEvent with
	// strict set for events.k8s.io requests.
	register(&kind[*events.Event]{
		ownMeta: true,
		spec:    func(ev *events.Event) field.ErrorList { return legacyEvent(ev.V1(), false) },
	})
	// A decoded core/v1 Event gets the hub's rules.
	register(&kind[*corev1.Event]{
		ownMeta: true,
		spec:    func(ev *corev1.Event) field.ErrorList { return legacyEvent(ev, false) },
	})
	register(&kind[*eventsv1.Event]{
		ownMeta: true,
		spec: func(ev *eventsv1.Event) field.ErrorList {
			var hub events.Event
			events.FromEventsV1(ev, &hub)
			return strictEvent(hub.V1(), nil)
		},
		change: func(ev, old *eventsv1.Event) field.ErrorList {
			var hub, oldHub events.Event
			events.FromEventsV1(ev, &hub)
			events.FromEventsV1(old, &oldHub)
			return strictEventChange(hub.V1(), oldHub.V1())
		},
	})
}

// ValidateEvent validates an Event written through core/v1 (strict false),
// which upstream keeps lenient for old clients, or through events.k8s.io/v1
// (strict true). old is nil on create. The kind of each error's path is the
// core/v1 field name, as upstream reports it.
func ValidateEvent(ev, old *events.Event, strict bool) field.ErrorList {
	if ev == nil {
		return nil
	}
	if !strict {
		return legacyEvent(ev.V1(), false)
	}
	if old == nil {
		return strictEvent(ev.V1(), nil)
	}
	return strictEventChange(ev.V1(), old.V1())
}

// legacyEvent holds the checks every event passes. Events with an
// eventTime come from the new API and must say who reported them.
func legacyEvent(ev *corev1.Event, strict bool) field.ErrorList {
	var errs field.ErrorList
	reportingController := "reportingComponent"
	if strict {
		reportingController = "reportingController"
	}
	nsPath := field.NewPath("involvedObject", "namespace")
	if ev.EventTime.IsZero() {
		if ev.InvolvedObject.Namespace == "" {
			// Old clients write cluster-scoped events into "default".
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
			errs = append(errs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		rcPath := field.NewPath(reportingController)
		if ev.ReportingController == "" {
			errs = append(errs, field.Required(rcPath, ""))
		} else {
			errs = append(errs, qualifiedName(ev.ReportingController, rcPath)...)
		}
		errs = append(errs, requiredMax(ev.ReportingInstance, reportingInstanceLengthLimit, field.NewPath("reportingInstance"))...)
		errs = append(errs, requiredMax(ev.Action, actionLengthLimit, field.NewPath("action"))...)
		errs = append(errs, requiredMax(ev.Reason, reasonLengthLimit, field.NewPath("reason"))...)
		if len(ev.Message) > noteLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
		}
	}
	errs = append(errs, each(field.NewPath("namespace"), ev.Namespace, validation.IsDNS1123Subdomain(ev.Namespace))...)
	return errs
}

func requiredMax(value string, limit int, fldPath *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if len(value) > limit {
		return field.ErrorList{field.Invalid(fldPath, "", fmt.Sprintf("can have at most %v characters", limit))}
	}
	return nil
}

// strictEvent adds the events.k8s.io/v1 rules: full metadata checks, an
// event time, and none of the deprecated core/v1 fields.
func strictEvent(ev *corev1.Event, _ *corev1.Event) field.ErrorList {
	errs := legacyEvent(ev, true)
	errs = append(errs, apimachineryvalidation.ValidateObjectMeta(&ev.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)...)
	if ev.Series != nil {
		if ev.Series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series", "count"), "", "should be at least 2"))
		}
		if ev.Series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series", "lastObservedTime"), ""))
		}
	}
	if ev.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", ev.Type)))
	}
	if !ev.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !ev.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if ev.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if ev.Source.Component != "" || ev.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// strictEventChange lets an events.k8s.io event only grow its series.
func strictEventChange(ev, old *corev1.Event) field.ErrorList {
	errs := legacyEvent(ev, true)
	errs = append(errs, apimachineryvalidation.ValidateObjectMetaUpdate(&ev.ObjectMeta, &old.ObjectMeta, metadataPath)...)
	if ev.Series != nil {
		if ev.Series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series", "count"), "", "should be at least 2"))
		}
		if ev.Series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series", "lastObservedTime"), ""))
		}
	}
	fields := []struct {
		name     string
		new, old any
	}{
		{"involvedObject", ev.InvolvedObject, old.InvolvedObject},
		{"reason", ev.Reason, old.Reason},
		{"message", ev.Message, old.Message},
		{"source", ev.Source, old.Source},
		{"firstTimestamp", ev.FirstTimestamp, old.FirstTimestamp},
		{"lastTimestamp", ev.LastTimestamp, old.LastTimestamp},
		{"count", ev.Count, old.Count},
		{"type", ev.Type, old.Type},
		// Only microseconds survive serialization, so compare at that precision.
		{"eventTime", metav1.NewMicroTime(ev.EventTime.Truncate(time.Microsecond)), metav1.NewMicroTime(old.EventTime.Truncate(time.Microsecond))},
		{"action", ev.Action, old.Action},
		{"related", ev.Related, old.Related},
		{"reportingController", ev.ReportingController, old.ReportingController},
		{"reportingInstance", ev.ReportingInstance, old.ReportingInstance},
	}
	for _, f := range fields {
		errs = append(errs, immutable(f.new, f.old, field.NewPath(f.name))...)
	}
	return errs
}
