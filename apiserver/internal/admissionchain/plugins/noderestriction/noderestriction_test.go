package noderestriction

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

func TestPodCertificateRequests(t *testing.T) {
	n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "sa-uid"}}
	here := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns", UID: "pod-uid"}, Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "app"}}
	elsewhere := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns", UID: "other-uid"}, Spec: corev1.PodSpec{NodeName: "n2", ServiceAccountName: "app"}}
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static", Namespace: "ns", UID: "static-uid", Annotations: map[string]string{mirrorPodKey: "x"}}, Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "app"}}
	p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}
	admissiontest.Init(t, p, n1, sa, here, elsewhere, mirror)
	kubelet := &user.DefaultInfo{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
	valid := func() *certificatesv1.PodCertificateRequest {
		return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "req-"}, Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: "example.com/s", PodName: "mine", PodUID: "pod-uid", ServiceAccountName: "app", ServiceAccountUID: "sa-uid", NodeName: "n1", NodeUID: "node-uid",
		}}
	}
	with := func(f func(*certificatesv1.PodCertificateRequestSpec)) *certificatesv1.PodCertificateRequest {
		r := valid()
		f(&r.Spec)
		return r
	}
	pcrs := certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests")
	tests := []struct {
		name        string
		op          admission.Operation
		subresource string
		req         *certificatesv1.PodCertificateRequest
		wantErr     string
		forbidden   bool
	}{
		{name: "request for own pod", op: admission.Create, req: valid()},
		{name: "other node's name", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n2" }), wantErr: `which is not the requesting node "n1"`, forbidden: true},
		{name: "stale node UID", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = "old" }), wantErr: "inconsistent with the running node"},
		{name: "pod on another node", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName, s.PodUID = "other", "other-uid" }), wantErr: "is not running on node", forbidden: true},
		{name: "stale pod UID", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "old" }), wantErr: "which differs from running pod"},
		{name: "missing pod", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "gone" }), wantErr: "while retrieving pod"},
		{name: "mirror pod", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName, s.PodUID = "static", "static-uid" }), wantErr: "is a mirror pod", forbidden: true},
		{name: "other service account", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "default" }), wantErr: "contains serviceAccountName", forbidden: true},
		{name: "stale service account UID", op: admission.Create, req: with(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "old" }), wantErr: "contains serviceAccountUID"},
		{name: "status update", op: admission.Update, subresource: "status", req: valid(), wantErr: "unexpected operation", forbidden: true},
		{name: "delete", op: admission.Delete, req: nil, wantErr: "unexpected operation", forbidden: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj runtime.Object
			if tt.req != nil {
				obj = tt.req
			}
			a := admission.NewAttributesRecord(obj, nil, schema.GroupVersionKind{}, "ns", "", pcrs, tt.subresource, tt.op, nil, false, kubelet)
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
			if err != nil && apierrors.IsForbidden(err) != tt.forbidden {
				t.Errorf("forbidden = %v, want %v: a stale UID may be the informers' lag and is retried", apierrors.IsForbidden(err), tt.forbidden)
			}
		})
	}
}
