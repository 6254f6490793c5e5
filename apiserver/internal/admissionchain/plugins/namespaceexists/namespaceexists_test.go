package namespaceexists

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

func TestNamespaceExists(t *testing.T) {
	p := &Plugin{Namespaces: namespacelookup.New(admission.Create, admission.Update, admission.Delete)}
	admissiontest.Init(t, p, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "here"}})
	tests := []struct {
		name, ns     string
		wantNotFound bool
	}{
		{"existing namespace", "here", false},
		{"missing namespace", "gone", true},
		{"cluster-scoped request", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(&corev1.ConfigMap{}, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"), tt.ns, "c",
				corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			err := p.Validate(context.Background(), a, nil)
			if apierrors.IsNotFound(err) != tt.wantNotFound || (!tt.wantNotFound && err != nil) {
				t.Fatalf("got %v, want not found %v", err, tt.wantNotFound)
			}
		})
	}
}
