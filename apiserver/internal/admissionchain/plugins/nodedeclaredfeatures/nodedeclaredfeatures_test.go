package nodedeclaredfeatures

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/inplacepodresize"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func node(name string, declared ...string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		DeclaredFeatures: declared, NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.0"},
	}}
}

// initPod is a pod on nodeName whose non-sidecar init container asks for cpu.
func initPod(nodeName, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: nodeName,
			InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			Containers: []corev1.Container{{Name: "c"}}},
	}
}

func TestNodeDeclaredFeatureValidator(t *testing.T) {
	feature := inplacepodresize.IPPRInitContainersFeatureGate
	p := New()
	admissiontest.Init(t, p, node("declares", feature), node("lacks", "SomethingElse"), node("silent"))
	tests := []struct {
		name     string
		old, obj *corev1.Pod
		wantErr  string
	}{
		{"node declares the feature", initPod("declares", "1"), initPod("declares", "2"), ""},
		{"node lacks the feature", initPod("lacks", "1"), initPod("lacks", "2"), "pod update requires features " + feature + ` which are not available on node "lacks"`},
		{"update needing nothing", initPod("lacks", "1"), initPod("lacks", "1"), ""},
		{"node declaring nothing is not judged", initPod("silent", "1"), initPod("silent", "2"), ""},
		{"unscheduled pod", initPod("", "1"), initPod("", "2"), ""},
		{"missing node", initPod("gone", "1"), initPod("gone", "2"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.obj, tt.old, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "resize", admission.Update, &metav1.UpdateOptions{}, false, nil)
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
