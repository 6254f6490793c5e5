package defaults

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// volume sets the defaults of a pod volume and of whichever source it uses.
func volume(v *corev1.Volume) {
	if allPointersNil(&v.VolumeSource) {
		// A volume that names no source is scratch space.
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	src := &v.VolumeSource
	if src.Image != nil && src.Image.PullPolicy == "" {
		// The ImageVolume feature is on by default since 1.35.
		src.Image.PullPolicy = pullPolicy(src.Image.Reference)
	}
	hostPath(src.HostPath)
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = new(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = new(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = new(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		downwardAPIFiles(src.DownwardAPI.Items)
	}
	if src.Projected != nil {
		projected(src.Projected)
	}
	if src.ISCSI != nil {
		iscsiInterface(&src.ISCSI.ISCSIInterface)
	}
	if src.RBD != nil {
		rbd(&src.RBD.RBDPool, &src.RBD.RadosUser, &src.RBD.Keyring)
	}
	azureDisk(src.AzureDisk)
	if src.ScaleIO != nil {
		scaleIO(&src.ScaleIO.StorageMode, &src.ScaleIO.FSType)
	}
	if src.Ephemeral != nil && src.Ephemeral.VolumeClaimTemplate != nil {
		persistentVolumeClaimSpec(&src.Ephemeral.VolumeClaimTemplate.Spec)
	}
}

// allPointersNil reports whether every pointer field of the struct s points
// to is nil. Checking by reflection keeps sources added to VolumeSource by a
// later k8s.io/api covered without a change here.
func allPointersNil(s any) bool {
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			return false
		}
	}
	return true
}

// hostPath records an unset type explicitly as "", meaning no check.
func hostPath(h *corev1.HostPathVolumeSource) {
	if h != nil && h.Type == nil {
		h.Type = new(corev1.HostPathUnset)
	}
}

func downwardAPIFiles(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		objectFieldSelector(items[i].FieldRef)
	}
}

// projected defaults a projected volume and the sources that have defaults.
func projected(p *corev1.ProjectedVolumeSource) {
	if p.DefaultMode == nil {
		p.DefaultMode = new(corev1.ProjectedVolumeSourceDefaultMode)
	}
	for i := range p.Sources {
		src := &p.Sources[i]
		if src.DownwardAPI != nil {
			downwardAPIFiles(src.DownwardAPI.Items)
		}
		if src.ServiceAccountToken != nil && src.ServiceAccountToken.ExpirationSeconds == nil {
			src.ServiceAccountToken.ExpirationSeconds = new(int64(3600))
		}
	}
}

// The in-tree iSCSI, RBD, Azure Disk and ScaleIO sources carry +default
// markers in k8s.io/api; the helpers below apply them to both the pod volume
// and the persistent volume flavour of each source.

func iscsiInterface(iface *string) {
	if *iface == "" {
		*iface = "default"
	}
}

func rbd(pool, user, keyring *string) {
	if *pool == "" {
		*pool = "rbd"
	}
	if *user == "" {
		*user = "admin"
	}
	if *keyring == "" {
		*keyring = "/etc/ceph/keyring"
	}
}

func azureDisk(a *corev1.AzureDiskVolumeSource) {
	if a == nil {
		return
	}
	if a.CachingMode == nil {
		a.CachingMode = new(corev1.AzureDataDiskCachingReadWrite)
	}
	if a.FSType == nil {
		a.FSType = new("ext4")
	}
	if a.ReadOnly == nil {
		a.ReadOnly = new(false)
	}
	if a.Kind == nil {
		a.Kind = new(corev1.AzureSharedBlobDisk)
	}
}

func scaleIO(storageMode, fsType *string) {
	if *storageMode == "" {
		*storageMode = "ThinProvisioned"
	}
	if *fsType == "" {
		*fsType = "xfs"
	}
}

// persistentVolumeSource defaults the in-tree sources of a persistent volume
// spec, shared by PersistentVolume and VolumeAttachment's inline spec.
func persistentVolumeSource(src *corev1.PersistentVolumeSource) {
	hostPath(src.HostPath)
	if src.ISCSI != nil {
		iscsiInterface(&src.ISCSI.ISCSIInterface)
	}
	if src.RBD != nil {
		rbd(&src.RBD.RBDPool, &src.RBD.RadosUser, &src.RBD.Keyring)
	}
	azureDisk(src.AzureDisk)
	if src.ScaleIO != nil {
		scaleIO(&src.ScaleIO.StorageMode, &src.ScaleIO.FSType)
	}
}

// persistentVolumeClaimSpec defaults a claim spec wherever it appears:
// claims, StatefulSet claim templates and ephemeral volumes.
func persistentVolumeClaimSpec(s *corev1.PersistentVolumeClaimSpec) {
	if s.VolumeMode == nil {
		s.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	roundResourceList(&s.Resources.Limits)
	roundResourceList(&s.Resources.Requests)
}

// PersistentVolume sets the defaults of a PersistentVolume: phase Pending,
// reclaim policy Retain (a hand-made volume is kept when its claim goes) and
// volume mode Filesystem.
func PersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	roundResourceList(&pv.Spec.Capacity)
	persistentVolumeSource(&pv.Spec.PersistentVolumeSource)
}

// PersistentVolumeClaim sets the defaults of a PersistentVolumeClaim: phase
// Pending and the claim spec defaults.
func PersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	persistentVolumeClaimSpec(&pvc.Spec)
	roundResourceList(&pvc.Status.Capacity)
	roundResourceList(&pvc.Status.AllocatedResources)
}
