package eventratelimit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/lru"

	"trireme.dev/api/events"
)

// Plugin rate-limits Event writes.
type Plugin struct {
	*admission.Handler
	limiters []*limiter
}

var _ admission.ValidationInterface = (*Plugin)(nil)

// limiter is one limit: a token bucket per key, the least recently used
// dropped beyond the cache size.
type limiter struct {
	limit Limit
	clock flowcontrol.Clock
	mu    sync.Mutex
	// server is the single bucket of a Server limit.
	server  flowcontrol.PassiveRateLimiter
	buckets *lru.Cache
}

func newPlugin(cfg *config, clock flowcontrol.Clock) (*Plugin, error) {
	p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
	for _, l := range cfg.Limits {
		lim := &limiter{limit: l, clock: clock}
		if l.Type == Server {
			lim.server = flowcontrol.NewTokenBucketPassiveRateLimiterWithClock(float32(l.QPS), int(l.Burst), clock)
		} else {
			lim.buckets = lru.New(int(l.CacheSize))
		}
		p.limiters = append(p.limiters, lim)
	}
	return p, nil
}

func (l *limiter) accept(key string) bool {
	if l.server != nil {
		return l.server.TryAccept()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets.Get(key)
	if !ok {
		b = flowcontrol.NewTokenBucketPassiveRateLimiterWithClock(float32(l.limit.QPS), int(l.limit.Burst), l.clock)
		l.buckets.Add(key, b)
	}
	return b.(flowcontrol.PassiveRateLimiter).TryAccept()
}

// key is the bucket a request falls in for the limit's type.
func (l *limiter) key(a admission.Attributes) string {
	switch l.limit.Type {
	case Namespace:
		return a.GetNamespace()
	case User:
		if u := a.GetUserInfo(); u != nil {
			return u.GetName()
		}
	case SourceAndObject:
		if e := eventOf(a); e != nil {
			o := e.InvolvedObject
			return strings.Join([]string{e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion}, "")
		}
	}
	return ""
}

func eventOf(a admission.Attributes) *corev1.Event {
	switch e := a.GetObject().(type) {
	case *events.Event:
		return e.V1()
	case *corev1.Event:
		return e
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetKind().Kind != "Event" || a.GetSubresource() != "" {
		return nil
	}
	for _, l := range p.limiters {
		key := l.key(a)
		if !l.accept(key) {
			return apierrors.NewTooManyRequestsError(fmt.Sprintf("limit reached on type %v for key %v", l.limit.Type, key))
		}
	}
	return nil
}
