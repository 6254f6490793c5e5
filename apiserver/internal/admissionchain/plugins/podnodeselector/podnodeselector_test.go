package podnodeselector

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

const config = `
podNodeSelectorPluginConfig:
  clusterDefaultNodeSelector: env=prod
  limited: env=dev,zone=a
`

func TestPodNodeSelector(t *testing.T) {
	wl, err := readConfig(strings.NewReader(config))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		ns          *corev1.Namespace
		podSelector map[string]string
		want        map[string]string
		wantErr     string
	}{
		{"annotation merged", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{annotation: "disk=ssd"}}}, map[string]string{"gpu": "yes"}, map[string]string{"disk": "ssd", "gpu": "yes"}, ""},
		{"cluster default used", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, nil, map[string]string{"env": "prod"}, ""},
		{"conflict refused", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{annotation: "disk=ssd"}}}, map[string]string{"disk": "hdd"}, nil, "pod node label selector conflicts with its namespace node label selector"},
		{"whitelist refuses other labels", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "limited", Annotations: map[string]string{annotation: "env=dev"}}}, map[string]string{"zone": "b"}, nil, "pod node label selector labels conflict with its namespace whitelist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin(wl)
			admissiontest.Init(t, p, tt.ns)
			pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: tt.podSelector}}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), tt.ns.Name, "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			if admissiontest.ErrorWanted(t, admissiontest.Admit(p, a), tt.wantErr) {
				return
			}
			if len(pod.Spec.NodeSelector) != len(tt.want) {
				t.Fatalf("selector %v, want %v", pod.Spec.NodeSelector, tt.want)
			}
			for k, v := range tt.want {
				if pod.Spec.NodeSelector[k] != v {
					t.Fatalf("selector %v, want %v", pod.Spec.NodeSelector, tt.want)
				}
			}
		})
	}
}
