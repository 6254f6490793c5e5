package alwaysdeny

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

func TestAlwaysDeny(t *testing.T) {
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete} {
		t.Run(string(op), func(t *testing.T) {
			a := admission.NewAttributesRecord(&corev1.Pod{}, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", op, &metav1.CreateOptions{}, false, nil)
			if err := (Plugin{}).Validate(context.Background(), a, nil); !apierrors.IsForbidden(err) {
				t.Fatalf("got %v, want forbidden", err)
			}
		})
	}
}
