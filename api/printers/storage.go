package printers

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

var storageClassColumns = columns(
	nameCol(),
	col("Provisioner", typeString, storagev1.StorageClass{}.SwaggerDoc()["provisioner"]),
	col("ReclaimPolicy", typeString, storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]),
	col("VolumeBindingMode", typeString, storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]),
	col("AllowVolumeExpansion", typeString, storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]),
	ageCol(),
)

// Annotations that mark the default StorageClass; the beta one still counts.
const (
	defaultStorageClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

func storageClassCells(sc *storagev1.StorageClass, now time.Time) []any {
	name := sc.Name
	if sc.Annotations[defaultStorageClassAnnotation] == "true" || sc.Annotations[betaDefaultStorageClassAnnotation] == "true" {
		name += " (default)"
	}
	reclaim := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	binding := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		binding = string(*sc.VolumeBindingMode)
	}
	return []any{name, sc.Provisioner, reclaim, binding, deref(sc.AllowVolumeExpansion), age(sc, now)}
}

var csiDriverColumns = columns(
	nameCol(),
	col("AttachRequired", typeBoolean, storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"]),
	col("PodInfoOnMount", typeBoolean, storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"]),
	col("StorageCapacity", typeBoolean, storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"]),
	col("TokenRequests", typeString, storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"]),
	col("RequiresRepublish", typeBoolean, storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"]),
	col("Modes", typeString, storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"]),
	ageCol(),
)

func csiDriverCells(d *storagev1.CSIDriver, now time.Time) []any {
	// attachRequired defaults to true; the others default to false.
	attach := true
	if d.Spec.AttachRequired != nil {
		attach = *d.Spec.AttachRequired
	}
	tokens := unset
	if d.Spec.TokenRequests != nil {
		audiences := make([]string, len(d.Spec.TokenRequests))
		for i, t := range d.Spec.TokenRequests {
			audiences[i] = t.Audience
		}
		tokens = strings.Join(audiences, ",")
	}
	modes := make([]string, len(d.Spec.VolumeLifecycleModes))
	for i, m := range d.Spec.VolumeLifecycleModes {
		modes[i] = string(m)
	}
	return []any{d.Name, attach, deref(d.Spec.PodInfoOnMount), deref(d.Spec.StorageCapacity), tokens,
		deref(d.Spec.RequiresRepublish), orNone(strings.Join(modes, ",")), age(d, now)}
}

var csiNodeColumns = columns(
	nameCol(),
	col("Drivers", typeInteger, "Drivers indicates the number of CSI drivers registered on the node"),
	ageCol(),
)

func csiNodeCells(n *storagev1.CSINode, now time.Time) []any {
	return []any{n.Name, int64(len(n.Spec.Drivers)), age(n, now)}
}

var volumeAttachmentColumns = columns(
	nameCol(),
	asName(col("Attacher", typeString, storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"])),
	col("PV", typeString, storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
	col("Node", typeString, storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]),
	col("Attached", typeBoolean, storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
	ageCol(),
)

func volumeAttachmentCells(va *storagev1.VolumeAttachment, now time.Time) []any {
	return []any{va.Name, va.Spec.Attacher, deref(va.Spec.Source.PersistentVolumeName), va.Spec.NodeName, va.Status.Attached, age(va, now)}
}
