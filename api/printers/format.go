package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Placeholders upstream prints for missing values.
const (
	none    = "<none>"
	unset   = "<unset>"
	unknown = "<unknown>"
)

// defaultPrinter is upstream's table for kinds without a printer of their
// own (LimitRange, for one): the name and the creation time in RFC 3339.
var defaultPrinter = printer{
	columns: columns(
		nameCol(),
		col("Created At", typeDate, objectMetaDoc["creationTimestamp"]),
	),
	cells: func(obj runtime.Object, _ time.Time) ([]any, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("object has no metadata: %w", err)
		}
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}, nil
	},
}

// since is the short age of ts ("5m", "3d4h"), "<unknown>" when unset.
func since(ts metav1.Time, now time.Time) string {
	if ts.IsZero() {
		return unknown
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// sinceMicro is since for MicroTime stamps (events).
func sinceMicro(ts metav1.MicroTime, now time.Time) string {
	if ts.IsZero() {
		return unknown
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// age is since for an object's creation time.
func age(m metav1.Object, now time.Time) string {
	return since(m.GetCreationTimestamp(), now)
}

// containerCells joins the names and the images of containers with commas.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	i := make([]string, len(containers))
	for k, c := range containers {
		n[k], i[k] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// orNone returns s, or "<none>" when it is empty.
func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// boolPtr prints an optional boolean as upstream does for CronJob suspend.
func boolPtr(b *bool) string {
	switch {
	case b == nil:
		return unset
	case *b:
		return "True"
	default:
		return "False"
	}
}

// deref returns *p, or zero when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// firstWithMore joins up to limit entries and says how many of total were
// left out, the way upstream shortens endpoint and port lists.
func firstWithMore(list []string, total, limit int) string {
	if total > limit {
		return fmt.Sprintf("%s + %d more...", strings.Join(list, ","), total-limit)
	}
	if len(list) == 0 {
		return unset
	}
	return strings.Join(list, ",")
}

// sortObjects sorts items in place; less must be a strict order.
func sortObjects(items []runtime.Object, less func(a, b runtime.Object) bool) {
	sort.SliceStable(items, func(i, j int) bool { return less(items[i], items[j]) })
}

// qualifiedName is kind.group/name in lower case ("statefulset.apps/web"),
// or just the name when the kind is unknown.
func qualifiedName(gk schema.GroupKind, name string) string {
	if gk.Empty() {
		return name
	}
	return strings.ToLower(gk.String()) + "/" + name
}
