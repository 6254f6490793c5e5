package serviceaccount

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func plugin(t *testing.T, objs ...runtime.Object) *Plugin {
	t.Helper()
	p := newPlugin()
	p.generateName = func(prefix string) string { return prefix + "abcde" }
	admissiontest.Init(t, p, objs...)
	return p
}

func sa(name string, automount *bool) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, AutomountServiceAccountToken: automount,
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}
}

func TestServiceAccount(t *testing.T) {
	tests := []struct {
		name        string
		accounts    []runtime.Object
		pod         corev1.PodSpec
		annotations map[string]string
		wantSA      string
		wantMounted bool
		wantErr     string
	}{
		{name: "default account assigned and token mounted", accounts: []runtime.Object{sa("default", nil)}, wantSA: "default", wantMounted: true},
		{name: "named account used", accounts: []runtime.Object{sa("builder", nil)}, pod: corev1.PodSpec{ServiceAccountName: "builder"}, wantSA: "builder", wantMounted: true},
		{name: "missing default refused", wantErr: `error looking up service account ns/default: serviceaccount "default" not found`},
		{name: "pod opts out of token", accounts: []runtime.Object{sa("default", nil)}, pod: corev1.PodSpec{AutomountServiceAccountToken: new(false)}, wantSA: "default"},
		{name: "account opts out of token", accounts: []runtime.Object{sa("default", new(false))}, wantSA: "default"},
		{name: "pod opt-in beats account opt-out", accounts: []runtime.Object{sa("default", new(false))}, pod: corev1.PodSpec{AutomountServiceAccountToken: new(true)}, wantSA: "default", wantMounted: true},
		{name: "mirror pod left alone", annotations: map[string]string{mirrorPodAnnotation: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugin(t, tt.accounts...)
			spec := tt.pod
			spec.Containers = []corev1.Container{{Name: "app"}}
			spec.InitContainers = []corev1.Container{{Name: "init"}}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: tt.annotations}, Spec: spec}
			a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			if admissiontest.ErrorWanted(t, admissiontest.Admit(p, a), tt.wantErr) {
				return
			}
			if pod.Spec.ServiceAccountName != tt.wantSA {
				t.Errorf("service account %q, want %q", pod.Spec.ServiceAccountName, tt.wantSA)
			}
			mounted := len(pod.Spec.Volumes) == 1
			if mounted != tt.wantMounted {
				t.Fatalf("volumes %+v, want mounted=%v", pod.Spec.Volumes, tt.wantMounted)
			}
			if !mounted {
				return
			}
			v := pod.Spec.Volumes[0]
			if v.Name != "kube-api-access-abcde" || len(v.Projected.Sources) != 3 ||
				*v.Projected.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 ||
				v.Projected.Sources[1].ConfigMap.Name != "kube-root-ca.crt" ||
				v.Projected.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
				t.Errorf("volume %+v", v)
			}
			for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
				if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != MountPath || !c.VolumeMounts[0].ReadOnly {
					t.Errorf("container %s mounts %+v", c.Name, c.VolumeMounts)
				}
			}
			if len(pod.Spec.ImagePullSecrets) != 1 {
				t.Errorf("image pull secrets %+v, want the account's", pod.Spec.ImagePullSecrets)
			}
		})
	}
}
