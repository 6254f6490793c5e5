package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func newTestAuthorizer(t *testing.T) *Authorizer {
	t.Helper()
	pods, claims, volumes, attachments := NewIndexers()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(pods.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"}, Spec: corev1.PodSpec{
		NodeName: "node-a", ServiceAccountName: "web-sa",
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
		Containers: []corev1.Container{{Name: "c",
			Env:     []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "env-secret"}, Key: "k"}}}},
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "env-cm"}}}}}},
		Volumes: []corev1.Volume{
			{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol-secret"}}},
			{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "proj-cm"}}}}}}},
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		},
	}}))
	must(pods.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "other"}, Spec: corev1.PodSpec{
		NodeName: "node-b", Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "other-secret"}}}},
	}}))
	must(pods.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "pending"}, Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "pending-secret"}}}},
	}}))
	must(claims.Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-data"}}))
	must(volumes.Add(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-data"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h",
			NodeStageSecretRef: &corev1.SecretReference{Namespace: "storage", Name: "csi-creds"}}}}}))
	must(attachments.Add(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-a"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "node-a"}}))
	must(attachments.Add(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-b"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "node-b"}}))
	return New(pods, claims, volumes, attachments)
}

// withFields sets the request's field selector.
func withFields(a authorizer.AttributesRecord, selector string) authorizer.AttributesRecord {
	sel, err := fields.ParseSelector(selector)
	if err != nil {
		panic(err)
	}
	a.FieldSelectorRequirements = sel.Requirements()
	return a
}

func TestNodeAuthorizer(t *testing.T) {
	a := newTestAuthorizer(t)
	nodeA := &user.DefaultInfo{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	notInGroup := &user.DefaultInfo{Name: "system:node:node-a"}
	r := func(u user.Info, verb, group, resource, sub, ns, name string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
	}
	allow, none := authorizer.DecisionAllow, authorizer.DecisionNoOpinion
	for _, tc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
	}{
		{"secret volume of own pod", r(nodeA, "get", "", "secrets", "", "demo", "vol-secret"), allow},
		{"env secret of own pod", r(nodeA, "get", "", "secrets", "", "demo", "env-secret"), allow},
		{"image pull secret of own pod", r(nodeA, "get", "", "secrets", "", "demo", "pull"), allow},
		{"secret of a pod on another node", r(nodeA, "get", "", "secrets", "", "demo", "other-secret"), none},
		{"secret of an unscheduled pod", r(nodeA, "get", "", "secrets", "", "demo", "pending-secret"), none},
		{"secret nobody uses", r(nodeA, "get", "", "secrets", "", "demo", "unused"), none},
		{"listing secrets", r(nodeA, "list", "", "secrets", "", "demo", ""), none},
		{"csi secret of a mounted volume", r(nodeA, "get", "", "secrets", "", "storage", "csi-creds"), allow},
		{"envFrom configmap", r(nodeA, "get", "", "configmaps", "", "demo", "env-cm"), allow},
		{"projected configmap", r(nodeA, "get", "", "configmaps", "", "demo", "proj-cm"), allow},
		{"claim of own pod", r(nodeA, "get", "", "persistentvolumeclaims", "", "demo", "data"), allow},
		{"ephemeral claim of own pod", r(nodeA, "get", "", "persistentvolumeclaims", "", "demo", "web-scratch"), allow},
		{"claim status update", r(nodeA, "patch", "", "persistentvolumeclaims", "status", "demo", "data"), allow},
		{"volume bound to own claim", r(nodeA, "get", "", "persistentvolumes", "", "", "pv-data"), allow},
		{"token for own pod's account", r(nodeA, "create", "", "serviceaccounts", "token", "demo", "web-sa"), allow},
		{"token for another account", r(nodeA, "create", "", "serviceaccounts", "token", "demo", "default"), none},
		{"own pod's account", r(nodeA, "get", "", "serviceaccounts", "", "demo", "web-sa"), allow},
		{"another account", r(nodeA, "get", "", "serviceaccounts", "", "demo", "default"), none},
		{"listing accounts", r(nodeA, "list", "", "serviceaccounts", "", "demo", ""), none},
		{"creating a pod certificate request", r(nodeA, "create", "certificates.k8s.io", "podcertificaterequests", "", "demo", ""), allow},
		{"watching own pod certificate requests", withFields(r(nodeA, "watch", "certificates.k8s.io", "podcertificaterequests", "", "", ""), "spec.nodeName=node-a"), allow},
		{"listing own pod certificate requests", withFields(r(nodeA, "list", "certificates.k8s.io", "podcertificaterequests", "", "", ""), "spec.nodeName==node-a"), allow},
		{"listing another node's requests", withFields(r(nodeA, "list", "certificates.k8s.io", "podcertificaterequests", "", "", ""), "spec.nodeName=node-b"), none},
		{"listing every request", r(nodeA, "list", "certificates.k8s.io", "podcertificaterequests", "", "", ""), none},
		{"issuing a certificate", r(nodeA, "update", "certificates.k8s.io", "podcertificaterequests", "status", "demo", "req-1"), none},
		{"deleting a request", r(nodeA, "delete", "certificates.k8s.io", "podcertificaterequests", "", "demo", "req-1"), none},
		{"status of own pod", r(nodeA, "patch", "", "pods", "status", "demo", "web"), allow},
		{"status of another node's pod", r(nodeA, "patch", "", "pods", "status", "demo", "other"), none},
		{"reading pods", r(nodeA, "list", "", "pods", "", "", ""), allow},
		{"own node update", r(nodeA, "update", "", "nodes", "status", "", "node-a"), allow},
		{"other node update", r(nodeA, "patch", "", "nodes", "", "", "node-b"), none},
		{"reading other nodes", r(nodeA, "get", "", "nodes", "", "", "node-b"), allow},
		{"own lease", r(nodeA, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-a"), allow},
		{"other lease", r(nodeA, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-b"), none},
		{"lease elsewhere", r(nodeA, "update", "coordination.k8s.io", "leases", "", "kube-system", "node-a"), none},
		{"creating a lease", r(nodeA, "create", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), allow},
		{"own volume attachment", r(nodeA, "get", "storage.k8s.io", "volumeattachments", "", "", "va-a"), allow},
		{"other volume attachment", r(nodeA, "get", "storage.k8s.io", "volumeattachments", "", "", "va-b"), none},
		{"own csinode", r(nodeA, "patch", "storage.k8s.io", "csinodes", "", "", "node-a"), allow},
		{"events", r(nodeA, "create", "", "events", "", "demo", ""), allow},
		{"deployments are not a kubelet's", r(nodeA, "get", "apps", "deployments", "", "demo", "web"), none},
		{"node name without the group", r(notInGroup, "get", "", "secrets", "", "demo", "vol-secret"), none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := a.Authorize(context.Background(), tc.attrs)
			if err != nil || got != tc.want {
				t.Errorf("Authorize = %v (%q, %v), want %v", got, reason, err, tc.want)
			}
		})
	}
}
