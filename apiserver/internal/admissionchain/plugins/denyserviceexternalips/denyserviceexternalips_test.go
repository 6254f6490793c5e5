package denyserviceexternalips

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

func TestDenyServiceExternalIPs(t *testing.T) {
	svc := func(ips ...string) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{ExternalIPs: ips}}
	}
	tests := []struct {
		name     string
		obj, old *corev1.Service
		wantErr  bool
	}{
		{"create without external IPs", svc(), nil, false},
		{"create with external IP", svc("1.2.3.4"), nil, true},
		{"update keeping existing IP", svc("1.2.3.4"), svc("1.2.3.4", "5.6.7.8"), false},
		{"update adding IP", svc("1.2.3.4", "9.9.9.9"), svc("1.2.3.4"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := admission.Create
			var old *corev1.Service
			if tt.old != nil {
				op, old = admission.Update, tt.old
			}
			var oldObj admission.Attributes
			if old != nil {
				oldObj = admission.NewAttributesRecord(tt.obj, old, corev1.SchemeGroupVersion.WithKind("Service"), "ns", "s",
					corev1.SchemeGroupVersion.WithResource("services"), "", op, &metav1.UpdateOptions{}, false, nil)
			} else {
				oldObj = admission.NewAttributesRecord(tt.obj, nil, corev1.SchemeGroupVersion.WithKind("Service"), "ns", "s",
					corev1.SchemeGroupVersion.WithResource("services"), "", op, &metav1.CreateOptions{}, false, nil)
			}
			p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
			err := p.Validate(context.Background(), oldObj, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("got %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
