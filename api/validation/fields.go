package validation

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages shared by several kinds, worded as upstream words them so that
// clients matching on them keep working.
const (
	isNegativeErrorMsg    = apimachineryvalidation.IsNegativeErrorMsg
	isNotPositiveErrorMsg = `must be greater than zero`
	isNotIntegerErrorMsg  = `must be an integer`
	immutableErrorMsg     = apimachineryvalidation.FieldImmutableErrorMsg
)

// each turns the messages of a util/validation check into Invalid errors.
func each(fldPath *field.Path, value any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

func dns1123Label(value string, fldPath *field.Path) field.ErrorList {
	return each(fldPath, value, validation.IsDNS1123Label(value))
}

func dns1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	return each(fldPath, value, validation.IsDNS1123Subdomain(value))
}

func dns1035Label(value string, fldPath *field.Path) field.ErrorList {
	return each(fldPath, value, validation.IsDNS1035Label(value))
}

func qualifiedName(value string, fldPath *field.Path) field.ErrorList {
	return each(fldPath, value, content.IsLabelKey(value))
}

// pathSegmentName is upstream's name rule for kinds whose names need only be
// usable as one URL path segment; a generated name's prefix is checked as a
// prefix.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

func labelValue(value string, fldPath *field.Path) field.ErrorList {
	return each(fldPath, value, content.IsLabelValue(value))
}

func nonNegative(value int64, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(value, fldPath)
}

func positive(value int64, fldPath *field.Path) field.ErrorList {
	if value <= 0 {
		return field.ErrorList{field.Invalid(fldPath, value, isNotPositiveErrorMsg)}
	}
	return nil
}

func optNonNegative[I ~int32 | ~int64](value *I, fldPath *field.Path) field.ErrorList {
	if value == nil {
		return nil
	}
	return nonNegative(int64(*value), fldPath)
}

func immutable(newVal, oldVal any, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(newVal, oldVal, fldPath)
}

func nonNegativeQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), isNegativeErrorMsg)}
	}
	return nil
}

func positiveQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), isNotPositiveErrorMsg)}
	}
	return nil
}

// enum checks that value is one of allowed; an empty value is Required.
func enum[S ~string](value S, fldPath *field.Path, allowed ...S) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return optionalEnum(value, fldPath, allowed...)
}

// optionalEnum is enum for fields where empty means "not set".
func optionalEnum[S ~string](value S, fldPath *field.Path, allowed ...S) field.ErrorList {
	if value == "" {
		return nil
	}
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return field.ErrorList{field.NotSupported(fldPath, value, names)}
}

// labelSelector checks a selector's syntax, rejecting invalid label values as
// upstream does for newly written selectors.
func labelSelector(sel *metav1.LabelSelector, fldPath *field.Path) field.ErrorList {
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, fldPath)
}

// portNumOrName checks an IntOrString port reference: a number in 1-65535
// or an IANA_SVC_NAME.
func portNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	switch port.Type {
	case intstr.Int:
		return each(fldPath, port.IntValue(), validation.IsValidPortNum(port.IntValue()))
	case intstr.String:
		return each(fldPath, port.StrVal, validation.IsValidPortName(port.StrVal))
	}
	return field.ErrorList{field.InternalError(fldPath, fmt.Errorf("unknown type: %v", port.Type))}
}

func portNum(port int32, fldPath *field.Path) field.ErrorList {
	return each(fldPath, port, validation.IsValidPortNum(int(port)))
}

// intOrPercent checks a value that is either a non-negative integer or a
// percentage string like "25%".
func intOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		if msgs := validation.IsValidPercent(v.StrVal); len(msgs) > 0 {
			return each(fldPath, v, msgs)
		}
		if p, ok := percentValue(v); ok && p < 0 {
			return field.ErrorList{field.Invalid(fldPath, v, isNegativeErrorMsg)}
		}
		return nil
	case intstr.Int:
		return nonNegative(int64(v.IntValue()), fldPath)
	}
	return field.ErrorList{field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%')")}
}

// percentValue returns the number in a "NN%" string.
func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || !strings.HasSuffix(v.StrVal, "%") {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &n); err != nil {
		return 0, false
	}
	return n, true
}

// notMoreThan100Percent rejects percentages above 100%.
func notMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if p, ok := percentValue(v); ok && p > 100 {
		return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
	}
	return nil
}

// int32Range checks lo <= value <= hi with upstream's range wording.
func int32Range(value int64, lo, hi int, fldPath *field.Path) field.ErrorList {
	return each(fldPath, value, validation.IsInRange(int(value), lo, hi))
}

// localDescendingPath checks that p stays below the directory it is joined
// to: relative and without '..' elements.
func localDescendingPath(p string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(p) || strings.HasPrefix(p, `\`) {
		errs = append(errs, field.Invalid(fldPath, p, "must be a relative path"))
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			errs = append(errs, field.Invalid(fldPath, p, "must not contain '..'"))
			break
		}
	}
	return errs
}

// finalizers checks finalizer names in a spec (namespaces, not metadata).
func finalizers[S ~string](names []S, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, n := range names {
		errs = append(errs, apimachineryvalidation.ValidateFinalizerName(string(n), fldPath.Index(i))...)
	}
	return errs
}

// sizeOf adds up the bytes of a string or byte map's keys and values.
func sizeOf[V string | []byte](m map[string]V) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// annotations checks annotation keys and their total size (256 KiB).
func annotations(a map[string]string, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateAnnotations(a, fldPath)
}

func dnsSubdomainMsgs(value string) []string {
	return validation.IsDNS1123Subdomain(value)
}
