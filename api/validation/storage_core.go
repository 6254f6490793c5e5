package validation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*corev1.PersistentVolume]{
		cluster:      true,
		spec:         func(pv *corev1.PersistentVolume) field.ErrorList { return pvSpec(&pv.Spec, specPath) },
		change:       pvChange,
		statusChange: func(pv, old *corev1.PersistentVolume) field.ErrorList { return nil },
	})
	register(&kind[*corev1.PersistentVolumeClaim]{
		spec:         func(pvc *corev1.PersistentVolumeClaim) field.ErrorList { return pvcSpec(&pvc.Spec, specPath) },
		change:       pvcChange,
		statusChange: pvcStatusChange,
	})
}

var accessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod}
var volumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
var reclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimRetain, corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle}

func accessModeList(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	if len(modes) == 0 {
		return field.ErrorList{field.Required(fldPath, "at least 1 access mode is required")}
	}
	var errs field.ErrorList
	for _, m := range modes {
		errs = append(errs, enum(m, fldPath, accessModes...)...)
		if m == corev1.ReadWriteOncePod && len(modes) > 1 {
			errs = append(errs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
		}
	}
	return errs
}

// pvcSpec checks a claim's spec, standalone or in a template.
func pvcSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	errs := accessModeList(spec.AccessModes, fldPath.Child("accessModes"))
	errs = append(errs, labelSelector(spec.Selector, fldPath.Child("selector"))...)
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storagePath, ""))
	} else {
		errs = append(errs, positiveQuantity(q, storagePath)...)
	}
	for _, name := range sortedKeys(spec.Resources.Requests) {
		errs = append(errs, quantityValue(name, spec.Resources.Requests[name], fldPath.Child("resources", "requests").Key(string(name)))...)
	}
	for _, name := range sortedKeys(spec.Resources.Limits) {
		errs = append(errs, quantityValue(name, spec.Resources.Limits[name], fldPath.Child("resources", "limits").Key(string(name)))...)
	}
	if spec.StorageClassName != nil && *spec.StorageClassName != "" {
		errs = append(errs, dns1123Subdomain(*spec.StorageClassName, fldPath.Child("storageClassName"))...)
	}
	if spec.VolumeAttributesClassName != nil && *spec.VolumeAttributesClassName != "" {
		errs = append(errs, dns1123Subdomain(*spec.VolumeAttributesClassName, fldPath.Child("volumeAttributesClassName"))...)
	}
	if spec.VolumeMode != nil {
		errs = append(errs, enum(*spec.VolumeMode, fldPath.Child("volumeMode"), volumeModes...)...)
	}
	if ds := spec.DataSource; ds != nil {
		errs = append(errs, dataSourceRef(ds.APIGroup, ds.Kind, ds.Name, fldPath.Child("dataSource"))...)
	}
	if ds := spec.DataSourceRef; ds != nil {
		p := fldPath.Child("dataSourceRef")
		errs = append(errs, dataSourceRef(ds.APIGroup, ds.Kind, ds.Name, p)...)
		if ds.Namespace != nil && *ds.Namespace != "" {
			errs = append(errs, dns1123Label(*ds.Namespace, p.Child("namespace"))...)
		}
	}
	return errs
}

func dataSourceRef(group *string, kind, name string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	if kind == "" {
		errs = append(errs, field.Required(fldPath.Child("kind"), ""))
	}
	if (group == nil || *group == "") && kind != "" && kind != "PersistentVolumeClaim" {
		errs = append(errs, field.Invalid(fldPath, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	return errs
}

// pvcChange keeps a claim's spec immutable, except that the binder may set
// volumeName once and users may resize or change the attributes class.
func pvcChange(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, immutable(pvc.Annotations[corev1.BetaStorageClassAnnotation], old.Annotations[corev1.BetaStorageClassAnnotation], metadataPath.Child("annotations").Key(corev1.BetaStorageClassAnnotation))...)
	newSpec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if oldSpec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	// A claim written with the beta annotation may move to the field once.
	if oldSpec.StorageClassName == nil && newSpec.StorageClassName != nil && old.Annotations[corev1.BetaStorageClassAnnotation] == *newSpec.StorageClassName {
		oldSpec.StorageClassName = newSpec.StorageClassName
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		if newSpec.Resources.Requests != nil {
			if q, ok := oldSpec.Resources.Requests[corev1.ResourceStorage]; ok {
				newSpec.Resources.Requests[corev1.ResourceStorage] = q
			} else {
				delete(newSpec.Resources.Requests, corev1.ResourceStorage)
			}
		}
		newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !equality.Semantic.DeepEqual(newSpec, oldSpec) {
		errs = append(errs, field.Forbidden(specPath, "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	newSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	oldSize := old.Spec.Resources.Requests[corev1.ResourceStorage]
	// Shrinking is only allowed back towards the actual size, to recover
	// from a failed expansion; volumes never shrink.
	if newSize.Cmp(oldSize) < 0 {
		if capacity := old.Status.Capacity[corev1.ResourceStorage]; newSize.Cmp(capacity) <= 0 {
			errs = append(errs, field.Forbidden(specPath.Child("resources", "requests", "storage"), "field can not be less than status.capacity"))
		}
	}
	return errs
}

func pvcStatusChange(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	statusPath := field.NewPath("status")
	errs = append(errs, accessModeListOptional(pvc.Status.AccessModes, statusPath.Child("accessModes"))...)
	for _, name := range sortedKeys(pvc.Status.Capacity) {
		errs = append(errs, quantityValue(name, pvc.Status.Capacity[name], statusPath.Child("capacity").Key(string(name)))...)
	}
	for _, name := range sortedKeys(pvc.Status.AllocatedResources) {
		p := statusPath.Child("allocatedResources").Key(string(name))
		if name != corev1.ResourceStorage {
			errs = append(errs, field.NotSupported(p, name, []string{string(corev1.ResourceStorage)}))
			continue
		}
		errs = append(errs, quantityValue(name, pvc.Status.AllocatedResources[name], p)...)
	}
	return errs
}

func accessModeListOptional(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, m := range modes {
		errs = append(errs, enum(m, fldPath, accessModes...)...)
	}
	return errs
}

// pvSpec checks a PersistentVolume's spec.
func pvSpec(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	errs := accessModeList(spec.AccessModes, fldPath.Child("accessModes"))
	capPath := fldPath.Child("capacity")
	if len(spec.Capacity) == 0 {
		errs = append(errs, field.Required(capPath, ""))
	} else if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		errs = append(errs, field.NotSupported(capPath, spec.Capacity, []string{string(corev1.ResourceStorage)}))
	}
	for _, name := range sortedKeys(spec.Capacity) {
		errs = append(errs, positiveQuantity(spec.Capacity[name], capPath.Key(string(name)))...)
	}
	if spec.PersistentVolumeReclaimPolicy != "" {
		errs = append(errs, enum(spec.PersistentVolumeReclaimPolicy, fldPath.Child("persistentVolumeReclaimPolicy"), reclaimPolicies...)...)
	}
	if spec.StorageClassName != "" {
		errs = append(errs, dns1123Subdomain(spec.StorageClassName, fldPath.Child("storageClassName"))...)
	}
	if spec.VolumeMode != nil {
		errs = append(errs, enum(*spec.VolumeMode, fldPath.Child("volumeMode"), volumeModes...)...)
	}
	if spec.VolumeAttributesClassName != nil && *spec.VolumeAttributesClassName != "" {
		errs = append(errs, dns1123Subdomain(*spec.VolumeAttributesClassName, fldPath.Child("volumeAttributesClassName"))...)
	}
	if spec.NodeAffinity != nil {
		p := fldPath.Child("nodeAffinity")
		if spec.NodeAffinity.Required == nil {
			errs = append(errs, field.Required(p.Child("required"), "must specify required node constraints"))
		} else {
			errs = append(errs, nodeSelector(spec.NodeAffinity.Required, p.Child("required"))...)
		}
	}
	if ref := spec.ClaimRef; ref != nil && ref.Name != "" && ref.Namespace == "" {
		errs = append(errs, field.Required(fldPath.Child("claimRef", "namespace"), ""))
	}
	errs = append(errs, pvSource(spec, fldPath)...)
	return errs
}

// pvSource requires exactly one volume source and checks the common ones.
func pvSource(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	src := &spec.PersistentVolumeSource
	set := setSources(src)
	if len(set) == 0 {
		return field.ErrorList{field.Required(fldPath, "must specify a volume type")}
	}
	var errs field.ErrorList
	for _, name := range set[1:] {
		errs = append(errs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 volume type"))
	}
	p := fldPath.Child(set[0])
	switch {
	case src.HostPath != nil:
		errs = append(errs, hostPathSource(src.HostPath, p)...)
		if spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle && src.HostPath.Path == "/" {
			errs = append(errs, field.Forbidden(fldPath.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
		}
	case src.Local != nil:
		if src.Local.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else {
			errs = append(errs, noBacksteps(src.Local.Path, p.Child("path"))...)
		}
		if spec.NodeAffinity == nil {
			errs = append(errs, field.Required(fldPath.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	case src.NFS != nil:
		if src.NFS.Server == "" {
			errs = append(errs, field.Required(p.Child("server"), ""))
		}
		if src.NFS.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
	case src.CSI != nil:
		if src.CSI.Driver == "" {
			errs = append(errs, field.Required(p.Child("driver"), ""))
		} else {
			errs = append(errs, csiDriverName(src.CSI.Driver, p.Child("driver"))...)
		}
		if src.CSI.VolumeHandle == "" {
			errs = append(errs, field.Required(p.Child("volumeHandle"), ""))
		}
	case src.ISCSI != nil:
		errs = append(errs, iscsiSource(src.ISCSI.TargetPortal, src.ISCSI.IQN, src.ISCSI.Lun, p)...)
	}
	return errs
}

// pvChange keeps the volume's identity: its source, mode and, once set,
// node affinity.
func pvChange(pv, old *corev1.PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(specPath.Child("persistentvolumesource"), "spec.persistentvolumesource is immutable after creation"))
	}
	errs = append(errs, immutable(pv.Spec.VolumeMode, old.Spec.VolumeMode, specPath.Child("volumeMode"))...)
	if old.Spec.NodeAffinity != nil {
		errs = append(errs, immutable(pv.Spec.NodeAffinity, old.Spec.NodeAffinity, specPath.Child("nodeAffinity"))...)
	}
	return errs
}
