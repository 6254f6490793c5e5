package framework

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestPodInPreBind(t *testing.T) {
	tests := []struct {
		name         string
		cancelFirst  bool
		wantCancel   bool
		wantPrebound bool
	}{
		{name: "cancel before prebound", cancelFirst: true, wantCancel: true, wantPrebound: false},
		{name: "prebound before cancel", cancelFirst: false, wantCancel: false, wantPrebound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Framework{inPreBind: map[types.UID]*podInPreBind{}}
			ctx, cancel := context.WithCancelCause(context.Background())
			f.AddPodInPreBind("u", cancel)
			p := f.GetPodInPreBind("u")
			var cancelled, prebound bool
			if tt.cancelFirst {
				cancelled, prebound = p.CancelPod("pod deleted"), p.MarkPrebound()
			} else {
				prebound, cancelled = p.MarkPrebound(), p.CancelPod("pod deleted")
			}
			if cancelled != tt.wantCancel || prebound != tt.wantPrebound {
				t.Errorf("cancelled=%v prebound=%v, want %v %v", cancelled, prebound, tt.wantCancel, tt.wantPrebound)
			}
			if got := ctx.Err() != nil; got != tt.wantCancel {
				t.Errorf("context cancelled=%v", got)
			}
			if tt.wantCancel && !errors.Is(ctx.Err(), context.Canceled) {
				t.Errorf("cause %v", context.Cause(ctx))
			}
			f.RemovePodInPreBind("u")
			if f.GetPodInPreBind("u") != nil {
				t.Error("still tracked after removal")
			}
		})
	}
}
