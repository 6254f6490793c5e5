package events

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Event is the in-memory (hub) form of an Event. It has the shape of a core/v1
// Event: that is what upstream stores, so objects written by either group read
// back unchanged from the other.
type Event corev1.Event

// EventList is a list of hub Events.
type EventList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Event `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (e *Event) DeepCopyObject() runtime.Object {
	if e == nil {
		return nil
	}
	return (*Event)((*corev1.Event)(e).DeepCopy())
}

// DeepCopyObject implements runtime.Object.
func (l *EventList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &EventList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Event, len(l.Items))
		for i := range l.Items {
			(*corev1.Event)(&l.Items[i]).DeepCopyInto((*corev1.Event)(&out.Items[i]))
		}
	}
	return out
}

// V1 returns e viewed as a core/v1 Event, sharing its memory.
func (e *Event) V1() *corev1.Event { return (*corev1.Event)(e) }
