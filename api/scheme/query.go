package scheme

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// queryKinds are the option kinds that subresources read from the query
// string (kubectl logs, exec, attach, port-forward, proxy).
var queryKinds = []runtime.Object{
	&corev1.PodLogOptions{}, &corev1.PodExecOptions{}, &corev1.PodAttachOptions{},
	&corev1.PodPortForwardOptions{}, &corev1.PodProxyOptions{}, &corev1.NodeProxyOptions{},
	&corev1.ServiceProxyOptions{},
}

func addQueryConversions(s *runtime.Scheme) error {
	for _, obj := range queryKinds {
		if err := s.AddConversionFunc((*url.Values)(nil), obj, func(a, b any, _ conversion.Scope) error {
			return DecodeQuery(*a.(*url.Values), b)
		}); err != nil {
			return fmt.Errorf("register query conversion for %T: %w", obj, err)
		}
	}
	return nil
}

var timeType = reflect.TypeOf(metav1.Time{})

// DecodeQuery sets the fields of the struct out points to from query
// parameters named by the fields' JSON tags. Repeated parameters fill slices.
func DecodeQuery(q url.Values, out any) error {
	v := reflect.ValueOf(out).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" || name == "-" {
			continue
		}
		vals, ok := q[name]
		if !ok || len(vals) == 0 {
			continue
		}
		if err := setField(v.Field(i), vals); err != nil {
			return fmt.Errorf("query parameter %q: %w", name, err)
		}
	}
	return nil
}

func setField(fv reflect.Value, vals []string) error {
	if fv.Kind() == reflect.Pointer {
		elem := reflect.New(fv.Type().Elem())
		if err := setField(elem.Elem(), vals); err != nil {
			return err
		}
		fv.Set(elem)
		return nil
	}
	if fv.Type() == timeType {
		ts, err := time.Parse(time.RFC3339, vals[0])
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(metav1.NewTime(ts)))
		return nil
	}
	switch fv.Kind() {
	case reflect.Slice:
		out := reflect.MakeSlice(fv.Type(), len(vals), len(vals))
		for i, s := range vals {
			if err := setField(out.Index(i), []string{s}); err != nil {
				return err
			}
		}
		fv.Set(out)
	case reflect.String:
		fv.SetString(vals[0])
	case reflect.Bool:
		b := vals[0] == "" || vals[0] == "1"
		if !b {
			var err error
			if b, err = strconv.ParseBool(vals[0]); err != nil {
				return err
			}
		}
		fv.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(vals[0], 10, fv.Type().Bits())
		if err != nil {
			return err
		}
		fv.SetInt(n)
	default:
		return fmt.Errorf("unsupported field type %s", fv.Type())
	}
	return nil
}
