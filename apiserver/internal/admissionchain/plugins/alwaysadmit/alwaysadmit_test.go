package alwaysadmit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

func TestAlwaysAdmit(t *testing.T) {
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
		t.Run(string(op), func(t *testing.T) {
			a := admission.NewAttributesRecord(&corev1.Pod{}, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", op, &metav1.CreateOptions{}, false, nil)
			if !(Plugin{}).Handles(op) {
				t.Fatal("operation not handled")
			}
			if err := (Plugin{}).Admit(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
			if err := (Plugin{}).Validate(context.Background(), a, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}
