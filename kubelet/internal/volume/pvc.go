package volume

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// persistentVolume returns the host directory of the volume bound to a
// PersistentVolumeClaim: a hostPath PV is set up as a hostPath volume (its
// type checked or created), a local PV's path must exist. Other volume
// kinds need a CSI or in-tree plugin this kubelet does not have.
func (m *Manager) persistentVolume(ctx context.Context, pod *corev1.Pod, src *corev1.PersistentVolumeClaimVolumeSource) (string, error) {
	if m.client == nil {
		return "", fmt.Errorf("no apiserver connection")
	}
	pvc, err := m.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, src.ClaimName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get PersistentVolumeClaim %s: %w", src.ClaimName, err)
	}
	if pvc.DeletionTimestamp != nil {
		return "", fmt.Errorf("PersistentVolumeClaim %s is being deleted", src.ClaimName)
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
		return "", fmt.Errorf("PersistentVolumeClaim %s is not bound", src.ClaimName)
	}
	pv, err := m.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get PersistentVolume %s: %w", pvc.Spec.VolumeName, err)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != pvc.Namespace || ref.Name != pvc.Name || (ref.UID != "" && ref.UID != pvc.UID) {
		return "", fmt.Errorf("PersistentVolume %s is not bound to claim %s/%s", pv.Name, pvc.Namespace, pvc.Name)
	}
	switch {
	case pv.Spec.HostPath != nil:
		return m.hostPath(&corev1.HostPathVolumeSource{Path: pv.Spec.HostPath.Path, Type: pv.Spec.HostPath.Type})
	case pv.Spec.Local != nil:
		fi, err := os.Stat(pv.Spec.Local.Path)
		if err != nil {
			return "", fmt.Errorf("local PersistentVolume %s: %w", pv.Name, err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("local PersistentVolume %s: %s is not a directory", pv.Name, pv.Spec.Local.Path)
		}
		return pv.Spec.Local.Path, nil
	}
	return "", fmt.Errorf("PersistentVolume %s: only hostPath and local volumes are supported by this kubelet", pv.Name)
}
