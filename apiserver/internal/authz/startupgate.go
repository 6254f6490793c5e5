package authz

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/tools/cache"
)

// StartupWait is the longest a refused request waits for the authorizers'
// informers to fill after the server starts.
const StartupWait = 10 * time.Second

// startupGate holds a request its authorizer refuses while the informers the
// RBAC and Node modes read are still filling, and judges it again once they
// have. Without it a restarted apiserver answers 403 to every kubelet and
// controller whose permissions it has not read yet; their reflectors then
// back off for up to 30 s, and a kubelet's pod status goes stale meanwhile.
//
// Allowed requests never wait, nor do system:masters (the loopback client
// that fills the informers is one: the privileged-groups authorizer allows
// it), nor the health endpoints, whose probes must see the server as it is.
// Only the authorizers' own informers are waited for, not every informer of
// the server's factory, some of which fill much later.
type startupGate struct {
	inner  authorizer.Authorizer
	synced []cache.InformerSynced
	wait   time.Duration
	poll   time.Duration
	ready  atomic.Bool
}

func newStartupGate(inner authorizer.Authorizer, synced []cache.InformerSynced, wait time.Duration) *startupGate {
	return &startupGate{inner: inner, synced: synced, wait: wait, poll: 50 * time.Millisecond}
}

// isReady says whether every informer has filled; once true it stays true.
func (g *startupGate) isReady() bool {
	if g.ready.Load() {
		return true
	}
	for _, s := range g.synced {
		if !s() {
			return false
		}
	}
	g.ready.Store(true)
	return true
}

// Authorize implements authorizer.Authorizer.
func (g *startupGate) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	d, reason, err := g.inner.Authorize(ctx, a)
	if d != authorizer.DecisionAllow && g.waitReady(ctx, a) {
		return g.inner.Authorize(ctx, a)
	}
	return d, reason, err
}

// ConditionsAwareAuthorize implements authorizer.Authorizer; a conditional
// decision does not wait, its conditions are judged later.
func (g *startupGate) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	d := g.inner.ConditionsAwareAuthorize(ctx, a)
	if (d.IsNoOpinion() || d.IsDeny()) && g.waitReady(ctx, a) {
		return g.inner.ConditionsAwareAuthorize(ctx, a)
	}
	return d
}

// EvaluateConditions implements authorizer.Authorizer.
func (g *startupGate) EvaluateConditions(ctx context.Context, d authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return g.inner.EvaluateConditions(ctx, d, data)
}

// waitReady waits, for a refused request, until the informers have filled
// and says whether the request should be judged again: not when they had
// already (the refusal stands), nor for a health probe, nor when the wait
// ended first.
func (g *startupGate) waitReady(ctx context.Context, a authorizer.Attributes) bool {
	if g.isReady() || isHealthPath(a) {
		return false
	}
	deadline := time.NewTimer(g.wait)
	defer deadline.Stop()
	tick := time.NewTicker(g.poll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if g.isReady() {
				return true
			}
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		}
	}
}

// isHealthPath says whether a is a request for /healthz, /livez or /readyz.
func isHealthPath(a authorizer.Attributes) bool {
	if a.IsResourceRequest() {
		return false
	}
	p := a.GetPath()
	for _, h := range []string{"/healthz", "/livez", "/readyz"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}
