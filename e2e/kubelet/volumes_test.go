package kubelet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestPVCAndClusterTrustBundleVolumes: a claim the controller-manager's PV
// binder binds to a hostPath PV is mounted with the PV's files, and a
// clusterTrustBundle projection writes the bundle (the cluster CA here).
func TestPVCAndClusterTrustBundleVolumes(t *testing.T) {
	ctx := context.Background()
	hostDir := filepath.Join(suite.dir, "pv-data")
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostDir, "greeting"), []byte("from-the-pv"), 0o644); err != nil {
		t.Fatal(err)
	}
	pvName := suite.nodeName + "-pv"
	_, err := suite.client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: ptr.To(corev1.HostPathDirectory)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	_, err = suite.client.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(""),
			VolumeName:       pvName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.CoreV1().PersistentVolumeClaims("default").Delete(context.Background(), "data", metav1.DeleteOptions{})
	})
	caPEM, err := os.ReadFile(suite.srv.CACertPath())
	if err != nil {
		t.Fatal(err)
	}
	ctbName := "e2e-kubelet-ca"
	_, err = suite.client.CertificatesV1().ClusterTrustBundles().Create(ctx, &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: ctbName},
		Spec:       certificatesv1.ClusterTrustBundleSpec{TrustBundle: string(caPEM)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.CertificatesV1().ClusterTrustBundles().Delete(context.Background(), ctbName, metav1.DeleteOptions{})
	})

	pod := boundPod("volumes-pvc", corev1.Container{
		Name: "app", Image: suite.busybox,
		Command:      []string{"sh", "-c", "cat /data/greeting; echo; head -1 /trust/ca.pem; sleep 3600"},
		VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "trust", MountPath: "/trust"}},
	})
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "trust", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To(ctbName), Path: "ca.pem"}},
		}}}},
	}
	createPod(t, pod)
	waitPod(t, "volumes-pvc", 60*time.Second, "Running", isReady)
	var out string
	err = waitFor(ctx, 10*time.Second, func() (bool, error) {
		b, err := suite.client.CoreV1().Pods("default").GetLogs("volumes-pvc", &corev1.PodLogOptions{}).DoRaw(ctx)
		out = string(b)
		return err == nil && strings.Contains(out, "-----BEGIN CERTIFICATE-----"), nil
	})
	if err != nil || !strings.HasPrefix(out, "from-the-pv\n") {
		t.Errorf("pod output %q (%v), want the PV's file then the bundle", out, err)
	}
}
