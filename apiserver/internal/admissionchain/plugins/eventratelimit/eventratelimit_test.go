package eventratelimit

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	testingclock "k8s.io/utils/clock/testing"
)

func eventAttrs(ns string) admission.Attributes {
	return admission.NewAttributesRecord(&corev1.Event{}, nil, corev1.SchemeGroupVersion.WithKind("Event"), ns, "e",
		corev1.SchemeGroupVersion.WithResource("events"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
}

func TestEventRateLimit(t *testing.T) {
	t.Run("config required", func(t *testing.T) {
		if _, err := readConfig(nil); err == nil {
			t.Fatal("missing configuration accepted")
		}
	})
	t.Run("unknown type refused", func(t *testing.T) {
		if _, err := readConfig(strings.NewReader("limits: [{type: Galaxy, qps: 1, burst: 1}]")); err == nil {
			t.Fatal("unknown type accepted")
		}
	})
	cfg, err := readConfig(strings.NewReader("kind: Configuration\nlimits:\n- type: Namespace\n  qps: 1\n  burst: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	clock := testingclock.NewFakeClock(time.Now())
	p, err := newPlugin(cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		ns      string
		advance time.Duration
		want429 bool
	}{
		{"first in burst", "a", 0, false},
		{"second in burst", "a", 0, false},
		{"burst spent", "a", 0, true},
		{"other namespace has its own bucket", "b", 0, false},
		{"refilled after a second", "a", time.Second, false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			clock.Step(s.advance)
			err := p.Validate(context.Background(), eventAttrs(s.ns), nil)
			if apierrors.IsTooManyRequests(err) != s.want429 {
				t.Fatalf("got %v, want 429 %v", err, s.want429)
			}
		})
	}
}
