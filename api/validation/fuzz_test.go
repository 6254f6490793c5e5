package validation_test

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"trireme.dev/api/scheme"
	"trireme.dev/api/validation"
)

// seeds returns the realistic manifests under testdata/seeds.
func seeds(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "seeds", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed manifests: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read seed: %v", err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// validateAll runs every entry point on obj; none may panic, whatever obj
// holds.
func validateAll(obj runtime.Object) {
	_ = validation.ValidateCreate(obj)
	_ = validation.ValidateUpdate(obj, obj)
	_ = validation.ValidateUpdate(obj, obj.DeepCopyObject())
	_ = validation.ValidateStatusUpdate(obj, obj)
	_ = validation.NameFunc(obj)("name", false)
}

// FuzzDecodeValidate decodes arbitrary bytes as any served kind and
// validates whatever comes out: validation must never panic on input a
// client can send.
func FuzzDecodeValidate(f *testing.F) {
	for _, b := range seeds(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{}],"volumes":[{}],"ephemeralContainers":[{}]}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Service","spec":{"clusterIP":"None","clusterIPs":["None","1.2.3.4","::1"],"ipFamilies":["IPv4","IPv4","IPv6"]}}`))
	decoder := scheme.Codecs.UniversalDeserializer()
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, _, err := decoder.Decode(data, nil, nil)
		if err != nil || obj == nil {
			return
		}
		validateAll(obj)
		// Validation normally runs on defaulted hub objects; check that
		// path too.
		scheme.Scheme.Default(obj)
		validateAll(obj)
		gvk := obj.GetObjectKind().GroupVersionKind()
		internal, err := scheme.Scheme.ConvertToVersion(obj, gvk.GroupKind().WithVersion(runtime.APIVersionInternal).GroupVersion())
		if err == nil {
			validateAll(internal)
		}
	})
}

// TestSeedsDecodeAndValidate keeps the fuzz seeds honest: each decodes to a
// kind validation knows, and validating it does not panic.
func TestSeedsDecodeAndValidate(t *testing.T) {
	decoder := scheme.Codecs.UniversalDeserializer()
	for name, b := range seeds(t) {
		t.Run(name, func(t *testing.T) {
			obj, _, err := decoder.Decode(b, nil, nil)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			scheme.Scheme.Default(obj)
			validateAll(obj)
			// Every seed kind is known: an update without resourceVersion
			// is rejected, except for core/v1 Events, which upstream keeps
			// lenient.
			if _, legacyEvent := obj.(*corev1.Event); !legacyEvent && len(validation.ValidateUpdate(obj, obj)) == 0 {
				t.Errorf("%T: expected at least the missing resourceVersion on update", obj)
			}
		})
	}
}
