package ownership

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestClaim(t *testing.T) {
	owner := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", UID: "owner"}}
	kind := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	mine := Ref(owner, kind)
	other := Ref(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "other"}}, kind)
	pod := func(name string, match bool, ref *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "p", Labels: map[string]string{"app": "no"}}}
		if match {
			p.Labels["app"] = "web"
		}
		if ref != nil {
			p.OwnerReferences = []metav1.OwnerReference{*ref}
		}
		return p
	}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		canAdopt   error
		finalizers []string
		wantClaim  bool
		wantPatch  string
	}{
		{"own and matching", pod("a", true, &mine), nil, nil, true, ""},
		{"own but no longer matching is released", pod("a", false, &mine), nil, nil, false, `"$patch":"delete"`},
		{"released with the owner's finalizers removed", pod("a", false, &mine), nil, []string{"f/x"}, false, `"$deleteFromPrimitiveList/finalizers":["f/x"]`},
		{"another owner's", pod("a", true, &other), nil, nil, false, ""},
		{"orphan matching is adopted", pod("a", true, nil), nil, nil, true, `"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"owner","controller":true,"blockOwnerDeletion":true}]`},
		{"adopted with the owner's finalizers added", pod("a", true, nil), nil, []string{"f/x"}, true, `"finalizers":["f/x"]`},
		{"orphan not matching", pod("a", false, nil), nil, nil, false, ""},
		{"orphan of a deleted owner is left alone", pod("a", true, nil), errors.New("gone"), nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var patched string
			c := &Claimer{
				Owner: owner, Kind: kind, Selector: labels.SelectorFromSet(labels.Set{"app": "web"}),
				Patch:      func(_ context.Context, _, _ string, p []byte) error { patched = string(p); return nil },
				CanAdopt:   func(context.Context) error { return tt.canAdopt },
				Finalizers: tt.finalizers,
			}
			got, _ := Claim(context.Background(), c, []*corev1.Pod{tt.pod})
			if (len(got) == 1) != tt.wantClaim {
				t.Errorf("claimed = %v, want %v", len(got) == 1, tt.wantClaim)
			}
			if tt.wantPatch == "" && patched != "" || !strings.Contains(patched, tt.wantPatch) {
				t.Errorf("patch %s, want one containing %s", patched, tt.wantPatch)
			}
		})
	}
}
