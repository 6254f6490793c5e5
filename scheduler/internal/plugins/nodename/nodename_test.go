package nodename

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func TestFilter(t *testing.T) {
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, []*v1.Node{plugintest.Node("a", "1"), plugintest.Node("b", "1")}, nil)
	for _, tt := range []struct {
		name, nodeName string
		want           map[string]bool
	}{
		{name: "no nodeName", want: map[string]bool{"a": true, "b": true}},
		{name: "nodeName b", nodeName: "b", want: map[string]bool{"a": false, "b": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.Pod("p", "", "")
			p.Spec.NodeName = tt.nodeName
			got, _ := h.Filter(t, p)
			for n, fits := range tt.want {
				if got[n].IsSuccess() != fits || (!fits && got[n].Message() != ErrReason) {
					t.Errorf("node %s: %v, want fits=%v", n, got[n], fits)
				}
			}
		})
	}
}
