package scheme

import (
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

func TestDecodeQuery(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		into    any
		want    any
		wantErr bool
	}{
		{"log options", "container=c&follow=true&tailLines=10&previous=1&timestamps=false", &corev1.PodLogOptions{},
			&corev1.PodLogOptions{Container: "c", Follow: true, TailLines: ptr.To[int64](10), Previous: true}, false},
		{"log sinceTime", "sinceTime=2026-11-30T00:00:00Z", &corev1.PodLogOptions{}, nil, false},
		{"exec repeated command", "command=sh&command=-c&command=echo+hi&stdout=true&container=x", &corev1.PodExecOptions{},
			&corev1.PodExecOptions{Command: []string{"sh", "-c", "echo hi"}, Stdout: true, Container: "x"}, false},
		{"port forward ports", "ports=80&ports=8080", &corev1.PodPortForwardOptions{},
			&corev1.PodPortForwardOptions{Ports: []int32{80, 8080}}, false},
		{"proxy path", "path=/healthz", &corev1.PodProxyOptions{}, &corev1.PodProxyOptions{Path: "/healthz"}, false},
		{"bad int", "tailLines=many", &corev1.PodLogOptions{}, nil, true},
		{"bad bool", "follow=maybe", &corev1.PodLogOptions{}, nil, true},
		{"bad time", "sinceTime=yesterday", &corev1.PodLogOptions{}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			err = DecodeQuery(q, tt.into)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.want != nil && !equality.Semantic.DeepEqual(tt.into, tt.want) {
				t.Errorf("got %+v, want %+v", tt.into, tt.want)
			}
		})
	}
}

func TestParameterCodecDecodesLogOptions(t *testing.T) {
	opts := &corev1.PodLogOptions{}
	if err := ParameterCodec.DecodeParameters(url.Values{"container": {"app"}, "limitBytes": {"42"}}, corev1.SchemeGroupVersion, opts); err != nil {
		t.Fatal(err)
	}
	if opts.Container != "app" || opts.LimitBytes == nil || *opts.LimitBytes != 42 {
		t.Errorf("decoded %+v", opts)
	}
}

// FuzzDecodeQuery feeds arbitrary query strings to every option kind: bad
// input must give an error, never a panic.
func FuzzDecodeQuery(f *testing.F) {
	for _, seed := range []string{"follow=true&tailLines=5", "command=a&command=b", "ports=80&ports=x", "sinceTime=2026-01-01T00:00:00Z", "limitBytes=-1&sinceSeconds=99999999999999999999"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for _, kind := range queryKinds {
			_ = DecodeQuery(q, kind.DeepCopyObject())
		}
	})
}
