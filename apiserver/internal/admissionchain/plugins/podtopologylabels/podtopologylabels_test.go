package podtopologylabels

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestPodTopologyLabels(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1", "other": "x",
	}}}
	p := &Plugin{Handler: admission.NewHandler(admission.Create)}
	admissiontest.Init(t, p, node)
	tests := []struct {
		name   string
		target string
		want   map[string]string
	}{
		{"zone and region copied", "n1", map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}},
		{"missing node leaves binding alone", "n9", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: tt.target}}
			a := admission.NewAttributesRecord(b, nil, corev1.SchemeGroupVersion.WithKind("Binding"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "binding", admission.Create, &metav1.CreateOptions{}, false, nil)
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			if len(b.Labels) != len(tt.want) {
				t.Fatalf("labels %v, want %v", b.Labels, tt.want)
			}
			for k, v := range tt.want {
				if b.Labels[k] != v {
					t.Fatalf("labels %v, want %v", b.Labels, tt.want)
				}
			}
		})
	}
}
