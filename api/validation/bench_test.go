package validation_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/api/scheme"
	"trireme.dev/api/validation"
)

var benchPod = []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7d9c6b8f4-abcde","namespace":"demo","labels":{"app":"web"}},
"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"name":"http"}],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"500m","memory":"256Mi"}},
"readinessProbe":{"httpGet":{"path":"/","port":80}}}]}}`)

// BenchmarkValidatePodCreate measures create validation of a defaulted pod.
func BenchmarkValidatePodCreate(b *testing.B) {
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(benchPod, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if errs := validation.ValidateCreate(obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkValidatePodUpdate measures update validation, immutability included.
func BenchmarkValidatePodUpdate(b *testing.B) {
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(benchPod, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	obj.(metav1.Object).SetResourceVersion("1")
	old := obj.DeepCopyObject()
	b.ReportAllocs()
	for b.Loop() {
		if errs := validation.ValidateUpdate(obj, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
