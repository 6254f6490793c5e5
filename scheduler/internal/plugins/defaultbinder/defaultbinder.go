// Package defaultbinder is the DefaultBinder plugin: it binds a pod by
// creating its pods/binding subresource.
package defaultbinder

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "DefaultBinder"

// Plugin implements fwk.BindPlugin.
type Plugin struct{ h fwk.Handle }

// New is the plugin's factory.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &Plugin{h: h}, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// Bind implements fwk.BindPlugin.
func (b *Plugin) Bind(ctx context.Context, _ fwk.CycleState, p *v1.Pod, node string) *fwk.Status {
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := b.h.ClientSet().CoreV1().Pods(p.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fwk.AsStatus(err)
	}
	return nil
}
