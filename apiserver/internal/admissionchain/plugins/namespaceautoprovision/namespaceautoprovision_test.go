package namespaceautoprovision

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

func TestNamespaceAutoProvision(t *testing.T) {
	tests := []struct {
		name    string
		dryRun  bool
		created bool
	}{
		{"missing namespace created", false, true},
		{"dry run creates nothing", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plugin{Namespaces: namespacelookup.New(admission.Create)}
			client := admissiontest.Init(t, p)
			a := admission.NewAttributesRecord(&corev1.ConfigMap{}, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "fresh", "c",
				corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, &metav1.CreateOptions{}, tt.dryRun, nil)
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			_, err := client.CoreV1().Namespaces().Get(context.Background(), "fresh", metav1.GetOptions{})
			if (err == nil) != tt.created {
				t.Fatalf("namespace get: %v, want created %v", err, tt.created)
			}
		})
	}
}
