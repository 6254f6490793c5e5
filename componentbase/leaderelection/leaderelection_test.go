package leaderelection

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

func lease(elect bool) componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:       ptr.To(elect),
		ResourceLock:      "leases",
		ResourceName:      "test",
		ResourceNamespace: "kube-system",
		// Whole seconds: the Lease stores its duration in seconds.
		LeaseDuration: metav1.Duration{Duration: 2 * time.Second},
		RenewDeadline: metav1.Duration{Duration: 1500 * time.Millisecond},
		RetryPeriod:   metav1.Duration{Duration: 200 * time.Millisecond},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*componentbaseconfig.LeaderElectionConfiguration)
		wantErr string
	}{
		{"valid", func(*componentbaseconfig.LeaderElectionConfiguration) {}, ""},
		{"off: nothing checked", func(le *componentbaseconfig.LeaderElectionConfiguration) {
			*le = lease(false)
			le.ResourceLock = "endpoints"
		}, ""},
		{"endpoints lock", func(le *componentbaseconfig.LeaderElectionConfiguration) { le.ResourceLock = "endpoints" }, "only leases"},
		{"no name", func(le *componentbaseconfig.LeaderElectionConfiguration) { le.ResourceName = "" }, "must not be empty"},
		{"lease shorter than deadline", func(le *componentbaseconfig.LeaderElectionConfiguration) {
			le.LeaseDuration.Duration = time.Second
		}, "--leader-elect-lease-duration"},
		{"retry too long for the deadline", func(le *componentbaseconfig.LeaderElectionConfiguration) {
			le.RetryPeriod.Duration = 1400 * time.Millisecond
		}, "1.2 x --leader-elect-retry-period"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			le := lease(true)
			tt.mutate(&le)
			errs := Validate(le)
			got := errors.Join(errs...)
			if tt.wantErr == "" && got != nil || tt.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tt.wantErr)) {
				t.Errorf("Validate = %v, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestAddFlags(t *testing.T) {
	le := lease(false)
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	AddFlags(fs, &le, "working")
	if err := fs.Parse([]string{"--leader-elect", "--leader-elect-resource-name=other", "--leader-elect-retry-period=1s"}); err != nil {
		t.Fatal(err)
	}
	if !*le.LeaderElect || le.ResourceName != "other" || le.RetryPeriod.Duration != time.Second || le.ResourceNamespace != "kube-system" {
		t.Errorf("after flags: %+v", le)
	}
}

func TestIdentity(t *testing.T) {
	a, err := Identity()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Identity()
	if a == b || !strings.Contains(a, "_") {
		t.Errorf("identities %q and %q: want host_uuid, distinct per process", a, b)
	}
}

// recorder keeps what Leading was told.
type recorder struct {
	mu  sync.Mutex
	got []bool
}

func (r *recorder) leading(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, v)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []string
	for _, v := range r.got {
		s = append(s, map[bool]string{true: "lead", false: "stop"}[v])
	}
	return strings.Join(s, ",")
}

// holder is the Lease's holder, "" when there is none; it does not fail t, so
// that any goroutine may call it.
func holder(t *testing.T, c *fake.Clientset) string {
	t.Helper()
	l, err := c.CoordinationV1().Leases("kube-system").Get(context.Background(), "test", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func TestRun(t *testing.T) {
	workErr := errors.New("work failed")
	tests := []struct {
		name string
		// work runs while leading; steal takes the Lease from under it.
		work        func(ctx context.Context) error
		steal       bool
		wantErr     error
		wantLeading string
	}{
		{"clean stop", func(ctx context.Context) error { <-ctx.Done(); return nil }, false, nil, "lead,stop"},
		{"work fails", func(context.Context) error { return workErr }, false, workErr, "lead,stop"},
		{"lease lost", func(ctx context.Context) error { <-ctx.Done(); return nil }, true, ErrLeadershipLost, "lead,stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset()
			// The fake keeps no resource versions: refuse the old holder's
			// writes once the Lease is stolen, as a conflict would.
			var stolen atomic.Bool
			c.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
				l := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
				if stolen.Load() && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "me" {
					return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), l.Name, errors.New("stolen"))
				}
				return false, nil, nil
			})
			rec := &recorder{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The holder is read as the work starts: work that fails at once
			// releases the Lease right after.
			working := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, Config{Lease: lease(true), Identity: "me", Client: c, Leading: rec.leading}, func(ctx context.Context) error {
					working <- holder(t, c)
					return tt.work(ctx)
				})
			}()
			select {
			case got := <-working:
				if got != "me" {
					t.Errorf("holder while leading = %q", got)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("never led")
			}
			if tt.steal {
				l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, "test", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				l.Spec.HolderIdentity = ptr.To("thief")
				l.Spec.LeaseDurationSeconds = ptr.To[int32](3600)
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(time.Hour)}
				if _, err := c.CoordinationV1().Leases("kube-system").Update(ctx, l, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				stolen.Store(true)
			} else if tt.wantErr == nil {
				cancel()
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return")
			}
			if !errors.Is(err, tt.wantErr) && err != tt.wantErr {
				t.Errorf("Run = %v, want %v", err, tt.wantErr)
			}
			if got := rec.String(); got != tt.wantLeading {
				t.Errorf("Leading told %s, want %s", got, tt.wantLeading)
			}
			if tt.name == "clean stop" && holder(t, c) == "me" {
				t.Error("the Lease is still held after a clean stop")
			}
		})
	}
}

func TestLead(t *testing.T) {
	workErr := errors.New("work failed")
	tests := []struct {
		name   string
		elect  bool
		err    error
		wantID bool
	}{
		{"election off: work at once", false, nil, false},
		{"election off: work's error", false, workErr, false},
		{"election on: a Lease with this host's identity", true, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset()
			rec := &recorder{}
			err := Lead(context.Background(), nil, "test", Config{Lease: lease(tt.elect), Client: c, Leading: rec.leading}, func(context.Context) error {
				if tt.wantID {
					if got, _ := Identity(); !strings.HasPrefix(holder(t, c), strings.Split(got, "_")[0]+"_") {
						t.Errorf("holder %q is not Identity()", holder(t, c))
					}
				}
				return tt.err
			})
			if !errors.Is(err, tt.err) {
				t.Errorf("Lead = %v, want %v", err, tt.err)
			}
			if got := rec.String(); got != "lead,stop" {
				t.Errorf("Leading told %s, want lead,stop", got)
			}
		})
	}
}
