package events

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// AddConversions registers the conversions between the hub Event and both
// served versions.
func AddConversions(s *runtime.Scheme) error {
	funcs := []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*corev1.Event)(nil), (*Event)(nil), func(a, b any, _ conversion.Scope) error {
			a.(*corev1.Event).DeepCopyInto(b.(*Event).V1())
			return nil
		}},
		{(*Event)(nil), (*corev1.Event)(nil), func(a, b any, _ conversion.Scope) error {
			a.(*Event).V1().DeepCopyInto(b.(*corev1.Event))
			return nil
		}},
		{(*corev1.EventList)(nil), (*EventList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*corev1.EventList), b.(*EventList)
			out.ListMeta = *in.ListMeta.DeepCopy()
			out.Items = make([]Event, len(in.Items))
			for i := range in.Items {
				in.Items[i].DeepCopyInto(out.Items[i].V1())
			}
			return nil
		}},
		{(*EventList)(nil), (*corev1.EventList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*EventList), b.(*corev1.EventList)
			out.ListMeta = *in.ListMeta.DeepCopy()
			out.Items = make([]corev1.Event, len(in.Items))
			for i := range in.Items {
				in.Items[i].V1().DeepCopyInto(&out.Items[i])
			}
			return nil
		}},
		{(*eventsv1.Event)(nil), (*Event)(nil), func(a, b any, _ conversion.Scope) error {
			FromEventsV1(a.(*eventsv1.Event), b.(*Event))
			return nil
		}},
		{(*Event)(nil), (*eventsv1.Event)(nil), func(a, b any, _ conversion.Scope) error {
			ToEventsV1(a.(*Event), b.(*eventsv1.Event))
			return nil
		}},
		{(*eventsv1.EventList)(nil), (*EventList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*eventsv1.EventList), b.(*EventList)
			out.ListMeta = *in.ListMeta.DeepCopy()
			out.Items = make([]Event, len(in.Items))
			for i := range in.Items {
				FromEventsV1(&in.Items[i], &out.Items[i])
			}
			return nil
		}},
		{(*EventList)(nil), (*eventsv1.EventList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*EventList), b.(*eventsv1.EventList)
			out.ListMeta = *in.ListMeta.DeepCopy()
			out.Items = make([]eventsv1.Event, len(in.Items))
			for i := range in.Items {
				ToEventsV1(&in.Items[i], &out.Items[i])
			}
			return nil
		}},
	}
	for _, f := range funcs {
		if err := s.AddConversionFunc(f.a, f.b, f.fn); err != nil {
			return err
		}
	}
	return nil
}

// FromEventsV1 fills out from an events.k8s.io/v1 Event, mapping fields the way
// upstream's conversion does so both APIs show the same event.
func FromEventsV1(in *eventsv1.Event, out *Event) {
	*out = Event{}
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.EventTime = *in.EventTime.DeepCopy()
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: *in.Series.LastObservedTime.DeepCopy()}
	}
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
	out.Action = in.Action
	out.Reason = in.Reason
	out.InvolvedObject = in.Regarding
	if in.Related != nil {
		r := *in.Related
		out.Related = &r
	}
	out.Message = in.Note
	out.Type = in.Type
	out.Source = in.DeprecatedSource
	out.FirstTimestamp = *in.DeprecatedFirstTimestamp.DeepCopy()
	out.LastTimestamp = *in.DeprecatedLastTimestamp.DeepCopy()
	out.Count = in.DeprecatedCount
}

// ToEventsV1 fills out, an events.k8s.io/v1 Event, from the hub form.
func ToEventsV1(in *Event, out *eventsv1.Event) {
	*out = eventsv1.Event{}
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.EventTime = *in.EventTime.DeepCopy()
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: *in.Series.LastObservedTime.DeepCopy()}
	}
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
	out.Action = in.Action
	out.Reason = in.Reason
	out.Regarding = in.InvolvedObject
	if in.Related != nil {
		r := *in.Related
		out.Related = &r
	}
	out.Note = in.Message
	out.Type = in.Type
	out.DeprecatedSource = in.Source
	out.DeprecatedFirstTimestamp = *in.FirstTimestamp.DeepCopy()
	out.DeprecatedLastTimestamp = *in.LastTimestamp.DeepCopy()
	out.DeprecatedCount = in.Count
}
