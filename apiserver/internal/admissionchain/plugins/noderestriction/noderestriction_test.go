package noderestriction

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestNodeRestriction(t *testing.T) {
	n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-1"}}
	elsewhere := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n2"}}
	here := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}
	admissiontest.Init(t, p, n1, elsewhere, here)

	kubelet := &user.DefaultInfo{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
	mirror := func(owner string, uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static", Namespace: "ns", Annotations: map[string]string{mirrorPodKey: "x"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: owner, UID: k8stypes.UID(uid), Controller: new(true)}}},
			Spec: corev1.PodSpec{NodeName: "n1"}}
	}
	tainted := n1.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}
	tests := []struct {
		name        string
		user        user.Info
		resource    schema.GroupVersionResource
		subresource string
		op          admission.Operation
		ns, objName string
		obj, old    runtime.Object
		wantErr     string
	}{
		{"mirror pod of itself", kubelet, corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, "ns", "static", mirror("n1", "uid-1"), nil, ""},
		{"ordinary pod refused", kubelet, corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, "ns", "p", here.DeepCopy(), nil, "node \"n1\" can only create mirror pods"},
		{"mirror pod owned by other node refused", kubelet, corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, "ns", "static", mirror("n2", "uid-1"), nil, "can only create pods with an owner reference set to itself"},
		{"status of own pod", kubelet, corev1.SchemeGroupVersion.WithResource("pods"), "status", admission.Update, "ns", "mine", here, here, ""},
		{"status of other pod refused", kubelet, corev1.SchemeGroupVersion.WithResource("pods"), "status", admission.Update, "ns", "other", elsewhere, elsewhere, "can only update pod status for pods with spec.nodeName set to itself"},
		{"delete other pod refused", kubelet, corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Delete, "ns", "other", nil, nil, "can only delete pods with spec.nodeName set to itself"},
		{"own node update", kubelet, corev1.SchemeGroupVersion.WithResource("nodes"), "status", admission.Update, "", "n1", n1, n1, ""},
		{"other node refused", kubelet, corev1.SchemeGroupVersion.WithResource("nodes"), "", admission.Update, "", "n2", n1, n1, `node "n1" is not allowed to modify node "n2"`},
		{"taint change refused", kubelet, corev1.SchemeGroupVersion.WithResource("nodes"), "", admission.Update, "", "n1", tainted, n1, "is not allowed to modify taints"},
		{"other lease refused", kubelet, schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "", admission.Update, nodeLeaseNamespace, "n2", nil, nil, "can only access node lease"},
		{"non-node user ignored", &user.DefaultInfo{Name: "alice"}, corev1.SchemeGroupVersion.WithResource("nodes"), "", admission.Update, "", "n2", n1, n1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.obj, tt.old, schema.GroupVersionKind{}, tt.ns, tt.objName, tt.resource, tt.subresource, tt.op, nil, false, tt.user)
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
