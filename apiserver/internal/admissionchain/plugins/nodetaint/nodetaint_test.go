package nodetaint

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

func TestTaintNodesByCondition(t *testing.T) {
	tests := []struct {
		name   string
		taints []corev1.Taint
		want   int
	}{
		{"new node gets not-ready taint", nil, 1},
		{"existing taint kept once", []corev1.Taint{notReady}, 1},
		{"other taints kept", []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Taints: tt.taints}}
			a := admission.NewAttributesRecord(node, nil, corev1.SchemeGroupVersion.WithKind("Node"), "", "n",
				corev1.SchemeGroupVersion.WithResource("nodes"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			p := &Plugin{Handler: admission.NewHandler(admission.Create)}
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			if len(node.Spec.Taints) != tt.want {
				t.Fatalf("taints %+v, want %d", node.Spec.Taints, tt.want)
			}
			found := false
			for _, tn := range node.Spec.Taints {
				found = found || (tn.Key == corev1.TaintNodeNotReady && tn.Effect == corev1.TaintEffectNoSchedule)
			}
			if !found {
				t.Fatalf("no not-ready taint in %+v", node.Spec.Taints)
			}
		})
	}
}
