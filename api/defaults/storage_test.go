package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Expected values: upstream pkg/apis/storage/v1/defaults.go
// SetDefaults_StorageClass and SetDefaults_CSIDriver (seLinuxMount with
// SELinuxMountReadWriteOncePod, on by default since 1.28), the nested
// defaults of SetObjectDefaults_VolumeAttachment.

func TestStorageClass(t *testing.T) {
	runDefaulting(t, StorageClass, []defaultingCase[storagev1.StorageClass]{
		{
			name: "delete and immediate",
			in:   &storagev1.StorageClass{Provisioner: "p"},
			want: &storagev1.StorageClass{
				Provisioner:       "p",
				ReclaimPolicy:     new(corev1.PersistentVolumeReclaimDelete),
				VolumeBindingMode: new(storagev1.VolumeBindingImmediate),
			},
		},
	})
}

func TestCSIDriver(t *testing.T) {
	runDefaulting(t, CSIDriver, []defaultingCase[storagev1.CSIDriver]{
		{
			name: "empty spec",
			in:   &storagev1.CSIDriver{},
			want: &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{
				AttachRequired:       new(true),
				PodInfoOnMount:       new(false),
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
				StorageCapacity:      new(false),
				FSGroupPolicy:        new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy),
				RequiresRepublish:    new(false),
				SELinuxMount:         new(false),
			}},
		},
		{
			name: "explicit values kept",
			in: &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{
				AttachRequired: new(false), VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral},
				FSGroupPolicy: new(storagev1.FileFSGroupPolicy), SELinuxMount: new(true),
			}},
			want: &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{
				AttachRequired:       new(false),
				PodInfoOnMount:       new(false),
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral},
				StorageCapacity:      new(false),
				FSGroupPolicy:        new(storagev1.FileFSGroupPolicy),
				RequiresRepublish:    new(false),
				SELinuxMount:         new(true),
			}},
		},
	})
}

func TestVolumeAttachment(t *testing.T) {
	runDefaulting(t, VolumeAttachment, []defaultingCase[storagev1.VolumeAttachment]{
		{
			// Only the nested source defaults: no reclaim policy or volume
			// mode, which SetDefaults_PersistentVolume sets on PV objects.
			name: "inline spec sources",
			in: &storagev1.VolumeAttachment{Spec: storagev1.VolumeAttachmentSpec{Source: storagev1.VolumeAttachmentSource{
				InlineVolumeSpec: &corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
					AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d"},
				}},
			}}},
			want: &storagev1.VolumeAttachment{Spec: storagev1.VolumeAttachmentSpec{Source: storagev1.VolumeAttachmentSource{
				InlineVolumeSpec: &corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
					AzureDisk: &corev1.AzureDiskVolumeSource{
						DiskName: "d", CachingMode: new(corev1.AzureDataDiskCachingReadWrite), FSType: new("ext4"), ReadOnly: new(false), Kind: new(corev1.AzureSharedBlobDisk),
					},
				}},
			}}},
		},
		{
			name: "persistent volume name only",
			in:   &storagev1.VolumeAttachment{Spec: storagev1.VolumeAttachmentSpec{Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: new("pv1")}}},
			want: &storagev1.VolumeAttachment{Spec: storagev1.VolumeAttachmentSpec{Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: new("pv1")}}},
		},
	})
}
