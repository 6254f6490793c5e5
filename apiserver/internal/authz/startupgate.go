package authz

import (
	"context"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// StartupWait is the longest a refused request waits for the authorizers'
// informers to fill after the server starts.
const StartupWait = 10 * time.Second

// startupGate holds a request its authorizer refuses while the informers the
// RBAC and Node modes read are still filling, and judges it again once they
// are. Without it a restarted apiserver answers 403 to every kubelet and
// controller whose permissions it has not read yet; their informers then back
// off for many seconds, and a kubelet's pod status goes stale meanwhile.
// Allowed requests never wait, nor do system:masters (the loopback client
// that fills the informers is one).
type startupGate struct {
	inner authorizer.Authorizer
	wait  time.Duration
	once  sync.Once
	ready chan struct{}
}

func newStartupGate(inner authorizer.Authorizer, wait time.Duration) *startupGate {
	return &startupGate{inner: inner, wait: wait, ready: make(chan struct{})}
}

// markReady opens the gate for good.
func (g *startupGate) markReady() { g.once.Do(func() { close(g.ready) }) }

// Authorize implements authorizer.Authorizer.
func (g *startupGate) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	d, reason, err := g.inner.Authorize(ctx, a)
	if d != authorizer.DecisionAllow && g.waitReady(ctx) {
		return g.inner.Authorize(ctx, a)
	}
	return d, reason, err
}

// ConditionsAwareAuthorize implements authorizer.Authorizer; a conditional
// decision does not wait, its conditions are judged later.
func (g *startupGate) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	d := g.inner.ConditionsAwareAuthorize(ctx, a)
	if (d.IsNoOpinion() || d.IsDeny()) && g.waitReady(ctx) {
		return g.inner.ConditionsAwareAuthorize(ctx, a)
	}
	return d
}

// EvaluateConditions implements authorizer.Authorizer.
func (g *startupGate) EvaluateConditions(ctx context.Context, d authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return g.inner.EvaluateConditions(ctx, d, data)
}

// waitReady waits, for a refused request, until the gate opens and says
// whether the request should be judged again: not when the gate was open
// already (the refusal stands), nor when the wait ended without it opening.
func (g *startupGate) waitReady(ctx context.Context) bool {
	select {
	case <-g.ready:
		return false
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case <-g.ready:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}
