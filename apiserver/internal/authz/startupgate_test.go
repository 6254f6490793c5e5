package authz

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/tools/cache"
)

// flipAuthorizer allows once allowed is set, as RBAC does once its informers
// hold the binding.
type flipAuthorizer struct{ allowed atomic.Bool }

func (f *flipAuthorizer) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	if f.allowed.Load() {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no binding", nil
}

func (f *flipAuthorizer) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(f.Authorize(ctx, a))
}

func (f *flipAuthorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func TestStartupGate(t *testing.T) {
	tests := []struct {
		name string
		// fill makes the policy allow and opens the gate after the delay;
		// a negative delay never does.
		fill time.Duration
		// readyFirst opens the gate before the request: a refusal stands.
		readyFirst bool
		want       authorizer.Decision
	}{
		{"refused while filling, allowed once filled", 20 * time.Millisecond, false, authorizer.DecisionAllow},
		{"refusal stands after the wait", -1, false, authorizer.DecisionNoOpinion},
		{"refusal stands once ready", -1, true, authorizer.DecisionNoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &flipAuthorizer{}
			var filled atomic.Bool
			g := newStartupGate(inner, []cache.InformerSynced{filled.Load}, 200*time.Millisecond)
			g.poll = time.Millisecond
			if tt.readyFirst {
				filled.Store(true)
			}
			if tt.fill >= 0 {
				go func() {
					time.Sleep(tt.fill)
					inner.allowed.Store(true)
					filled.Store(true)
				}()
			}
			d, _, err := g.Authorize(context.Background(), authorizer.AttributesRecord{ResourceRequest: true})
			if err != nil || d != tt.want {
				t.Errorf("Authorize = %v, %v; want %v", d, err, tt.want)
			}
		})
	}
}

func TestStartupGateAllowsAtOnce(t *testing.T) {
	inner := &flipAuthorizer{}
	inner.allowed.Store(true)
	g := newStartupGate(inner, []cache.InformerSynced{func() bool { return false }}, time.Hour)
	if d, _, _ := g.Authorize(context.Background(), authorizer.AttributesRecord{}); d != authorizer.DecisionAllow {
		t.Errorf("allowed request: %v", d)
	}
}

func TestStartupGateHonoursCancel(t *testing.T) {
	g := newStartupGate(&flipAuthorizer{}, []cache.InformerSynced{func() bool { return false }}, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, _, _ := g.Authorize(ctx, authorizer.AttributesRecord{ResourceRequest: true}); d != authorizer.DecisionNoOpinion {
		t.Errorf("cancelled request: %v", d)
	}
}

// TestStartupGateHealthProbesDoNotWait: a probe of /readyz while the
// informers fill is answered at once, so the probe sees the server as it is.
func TestStartupGateHealthProbesDoNotWait(t *testing.T) {
	g := newStartupGate(&flipAuthorizer{}, []cache.InformerSynced{func() bool { return false }}, time.Hour)
	for _, path := range []string{"/readyz", "/livez/ping", "/healthz"} {
		if d, _, _ := g.Authorize(context.Background(), authorizer.AttributesRecord{Path: path}); d != authorizer.DecisionNoOpinion {
			t.Errorf("%s: %v", path, d)
		}
	}
}
