package ownerreferences

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestOwnerReferencesPermissionEnforcement(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, meta.RESTScopeNamespace)
	ref := func(block bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1", BlockOwnerDeletion: new(block)}}
	}
	tests := []struct {
		name    string
		grants  admissiontest.Grants
		refs    []metav1.OwnerReference
		wantErr string
	}{
		{"no references need nothing", admissiontest.Grants{}, nil, ""},
		{"reference needs delete", admissiontest.Grants{}, ref(false), "cannot set an ownerRef on a resource you can't delete"},
		{"reference with delete allowed", admissiontest.Grants{"delete pods": true}, ref(false), ""},
		{"blocking needs owner finalizers", admissiontest.Grants{"delete pods": true}, ref(true), "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on"},
		{"blocking with finalizers allowed", admissiontest.Grants{"delete pods": true, "update replicasets/finalizers": true}, ref(true), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
			p.SetAuthorizer(tt.grants.Authorizer())
			p.SetRESTMapper(mapper)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", OwnerReferences: tt.refs}}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "bob"})
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
