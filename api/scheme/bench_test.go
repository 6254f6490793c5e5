package scheme

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// podJSON is a typical Deployment-made pod, as clients send it.
var podJSON = []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7d9c6b8f4-abcde","namespace":"demo","labels":{"app":"web","pod-template-hash":"7d9c6b8f4"}},
"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"name":"http"}],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"500m","memory":"256Mi"}},
"readinessProbe":{"httpGet":{"path":"/","port":80}},"env":[{"name":"MODE","value":"prod"}]}]}}`)

// BenchmarkDecodePod measures decoding with defaulting into the hub type,
// the work every pod create pays before validation.
func BenchmarkDecodePod(b *testing.B) {
	decoder := Codecs.UniversalDecoder()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decoder.Decode(podJSON, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodePodProtobuf measures the storage encoding of a pod.
func BenchmarkEncodePodProtobuf(b *testing.B) {
	obj, _, err := Codecs.UniversalDecoder(corev1.SchemeGroupVersion).Decode(podJSON, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	info, _ := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	enc := Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runtime.Encode(enc, obj); err != nil {
			b.Fatal(err)
		}
	}
}
