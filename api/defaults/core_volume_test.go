package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Expected values: upstream pkg/apis/core/v1/defaults.go
// SetDefaults_PersistentVolume, SetDefaults_PersistentVolumeClaim,
// SetDefaults_PersistentVolumeClaimSpec, SetDefaults_HostPathVolumeSource,
// and the +default markers of the persistent in-tree sources.

func TestPersistentVolume(t *testing.T) {
	runDefaulting(t, PersistentVolume, []defaultingCase[corev1.PersistentVolume]{
		{
			name: "hostPath volume",
			in: &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
			}},
			want: &corev1.PersistentVolume{
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data", Type: new(corev1.HostPathUnset)}},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					VolumeMode:                    new(corev1.PersistentVolumeFilesystem),
				},
				Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumePending},
			},
		},
		{
			name: "explicit values and persistent in-tree sources",
			in: &corev1.PersistentVolume{
				Spec: corev1.PersistentVolumeSpec{
					PersistentVolumeSource: corev1.PersistentVolumeSource{
						RBD:   &corev1.RBDPersistentVolumeSource{RBDImage: "i", RBDPool: "fast"},
						ISCSI: &corev1.ISCSIPersistentVolumeSource{IQN: "q"},
					},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
					VolumeMode:                    new(corev1.PersistentVolumeBlock),
				},
				Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
			},
			want: &corev1.PersistentVolume{
				Spec: corev1.PersistentVolumeSpec{
					PersistentVolumeSource: corev1.PersistentVolumeSource{
						RBD:   &corev1.RBDPersistentVolumeSource{RBDImage: "i", RBDPool: "fast", RadosUser: "admin", Keyring: "/etc/ceph/keyring"},
						ISCSI: &corev1.ISCSIPersistentVolumeSource{IQN: "q", ISCSIInterface: "default"},
					},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
					VolumeMode:                    new(corev1.PersistentVolumeBlock),
				},
				Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
			},
		},
	})
}

func TestPersistentVolumeClaim(t *testing.T) {
	runDefaulting(t, PersistentVolumeClaim, []defaultingCase[corev1.PersistentVolumeClaim]{
		{
			name: "claim gets filesystem mode and phase Pending",
			in: &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("0.0001")}},
			}},
			want: &corev1.PersistentVolumeClaim{
				Spec: corev1.PersistentVolumeClaimSpec{
					Resources:  corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1m")}},
					VolumeMode: new(corev1.PersistentVolumeFilesystem),
				},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
			},
		},
	})
}
