package defaultingressclass

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestDefaultIngressClass(t *testing.T) {
	nginx := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}}}
	tests := []struct {
		name        string
		classes     []runtime.Object
		annotations map[string]string
		want        string
	}{
		{"default applied", []runtime.Object{nginx}, nil, "nginx"},
		{"no default", nil, nil, ""},
		{"legacy annotation kept", []runtime.Object{nginx}, map[string]string{legacyClassAnnotation: "traefik"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plugin{Handler: admission.NewHandler(admission.Create)}
			admissiontest.Init(t, p, tt.classes...)
			ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
			a := admission.NewAttributesRecord(ing, nil, networkingv1.SchemeGroupVersion.WithKind("Ingress"), "ns", "i",
				networkingv1.SchemeGroupVersion.WithResource("ingresses"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			if err := p.Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			got := ""
			if ing.Spec.IngressClassName != nil {
				got = *ing.Spec.IngressClassName
			}
			if got != tt.want {
				t.Fatalf("class %q, want %q", got, tt.want)
			}
		})
	}
}
