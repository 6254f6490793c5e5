package apiserver_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// deref returns *p, or the zero value for nil, so checks can print it.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// fmtPtr applies f to p unless p is nil.
func fmtPtr[T any](p *T, f func(*T) any) any {
	if p == nil {
		return "<nil>"
	}
	return f(p)
}

// fmtAny renders a value for comparison, so typed strings compare with
// their constants and slices and maps compare by content.
func fmtAny(v any) string { return fmt.Sprintf("%#v", v) }

func intOrInt(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }
