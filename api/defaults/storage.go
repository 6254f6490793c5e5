package defaults

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// StorageClass makes dynamically provisioned volumes deleted with their
// claim and bound as soon as the claim is created.
func StorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = new(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = new(storagev1.VolumeBindingImmediate)
	}
}

// CSIDriver describes a driver that declares nothing as the most
// conservative one: it needs attaching, wants no pod info, publishes no
// capacity, supports only persistent volumes, gets fsGroup applied to
// ReadWriteOnce volumes with a filesystem type, needs no republishing and
// cannot mount with an SELinux context. The newer opt-ins
// (serviceAccountTokenInSecrets, preventPodSchedulingIfMissing,
// nodeAllocatableUpdatePeriodSeconds) stay unset, as upstream leaves them.
func CSIDriver(d *storagev1.CSIDriver) {
	spec := &d.Spec
	if spec.AttachRequired == nil {
		spec.AttachRequired = new(true)
	}
	if spec.PodInfoOnMount == nil {
		spec.PodInfoOnMount = new(false)
	}
	if spec.StorageCapacity == nil {
		spec.StorageCapacity = new(false)
	}
	if spec.FSGroupPolicy == nil {
		spec.FSGroupPolicy = new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(spec.VolumeLifecycleModes) == 0 {
		spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	if spec.RequiresRepublish == nil {
		spec.RequiresRepublish = new(false)
	}
	// SELinuxMountReadWriteOncePod is beta and on by default since 1.28.
	if spec.SELinuxMount == nil {
		spec.SELinuxMount = new(false)
	}
}

// VolumeAttachment defaults the in-tree sources of an inline (migrated)
// volume spec. The PersistentVolume-level defaults (reclaim policy, volume
// mode) belong to PersistentVolume objects and are not applied here.
func VolumeAttachment(va *storagev1.VolumeAttachment) {
	spec := va.Spec.Source.InlineVolumeSpec
	if spec == nil {
		return
	}
	roundResourceList(&spec.Capacity)
	persistentVolumeSource(&spec.PersistentVolumeSource)
}
