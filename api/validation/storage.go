package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*storagev1.StorageClass]{cluster: true, spec: storageClassRules, change: storageClassChange})
	register(&kind[*storagev1.CSIDriver]{
		cluster: true,
		name:    func(name string, prefix bool) []string { return csiDriverNameMsgs(name) },
		spec:    func(d *storagev1.CSIDriver) field.ErrorList { return csiDriverSpec(&d.Spec, specPath) },
		change:  csiDriverChange,
	})
	register(&kind[*storagev1.CSINode]{cluster: true, spec: csiNodeRules, change: csiNodeChange})
	register(&kind[*storagev1.VolumeAttachment]{
		cluster:      true,
		spec:         volumeAttachmentRules,
		change:       volumeAttachmentChange,
		statusChange: volumeAttachmentStatusChange,
	})
}

const (
	maxProvisionerParameters    = 512
	maxProvisionerParameterSize = 256 * 1024
	csiDriverNameMaxLength      = 63
	csiNodeIDMaxLength          = 192
)

var storageClassReclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain}
var volumeBindingModes = []storagev1.VolumeBindingMode{storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer}

func storageClassRules(sc *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, provisioner(sc.Provisioner, field.NewPath("provisioner"))...)
	errs = append(errs, provisionerParameters(sc.Parameters, field.NewPath("parameters"))...)
	if sc.ReclaimPolicy != nil {
		errs = append(errs, enum(*sc.ReclaimPolicy, field.NewPath("reclaimPolicy"), storageClassReclaimPolicies...)...)
	}
	if sc.VolumeBindingMode == nil {
		errs = append(errs, field.Required(field.NewPath("volumeBindingMode"), ""))
	} else {
		errs = append(errs, enum(*sc.VolumeBindingMode, field.NewPath("volumeBindingMode"), volumeBindingModes...)...)
	}
	errs = append(errs, topologySelectorTerms(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
	return errs
}

func provisioner(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return qualifiedName(strings.ToLower(name), fldPath)
}

func provisionerParameters(params map[string]string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(params) > maxProvisionerParameters {
		errs = append(errs, field.TooLong(fldPath, "", maxProvisionerParameters))
		return errs
	}
	for k := range params {
		if k == "" {
			errs = append(errs, field.Invalid(fldPath, k, "field can not be empty."))
		}
	}
	if sizeOf(params) > maxProvisionerParameterSize {
		errs = append(errs, field.TooLong(fldPath, "", maxProvisionerParameterSize))
	}
	return errs
}

func topologySelectorTerms(terms []corev1.TopologySelectorTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range terms {
		p := fldPath.Index(i)
		if len(t.MatchLabelExpressions) == 0 {
			errs = append(errs, field.Required(p, "must have at least one label selector requirement"))
		}
		keys := sets.New[string]()
		for j, r := range t.MatchLabelExpressions {
			rp := p.Child("matchLabelExpressions").Index(j)
			errs = append(errs, qualifiedName(r.Key, rp.Child("key"))...)
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), ""))
			}
			for k, v := range r.Values {
				errs = append(errs, labelValue(v, rp.Child("values").Index(k))...)
			}
			if keys.Has(r.Key) {
				errs = append(errs, field.Duplicate(rp.Child("key"), r.Key))
			}
			keys.Insert(r.Key)
		}
	}
	return errs
}

func storageClassChange(sc, old *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(sc.Parameters, old.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if sc.Provisioner != old.Provisioner {
		errs = append(errs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !equality.Semantic.DeepEqual(sc.ReclaimPolicy, old.ReclaimPolicy) {
		errs = append(errs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	errs = append(errs, immutable(sc.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
	return errs
}

// csiDriverNameMsgs checks a CSI driver name: a DNS subdomain of at most 63
// characters, as the CSI spec bounds it.
func csiDriverNameMsgs(name string) []string {
	if len(name) > csiDriverNameMaxLength {
		return []string{fmt.Sprintf("must be no more than %d characters", csiDriverNameMaxLength)}
	}
	return dnsSubdomainMsgs(strings.ToLower(name))
}

func csiDriverName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if len(name) > csiDriverNameMaxLength {
		return field.ErrorList{field.TooLong(fldPath, "", csiDriverNameMaxLength)}
	}
	return each(fldPath, name, dnsSubdomainMsgs(strings.ToLower(name)))
}

var fsGroupPolicies = []storagev1.FSGroupPolicy{storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy}
var volumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}

func csiDriverSpec(spec *storagev1.CSIDriverSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	required := []struct {
		name string
		set  bool
	}{
		{"attachRequired", spec.AttachRequired != nil}, {"podInfoOnMount", spec.PodInfoOnMount != nil},
		{"storageCapacity", spec.StorageCapacity != nil}, {"requiresRepublish", spec.RequiresRepublish != nil},
	}
	for _, r := range required {
		if !r.set {
			errs = append(errs, field.Required(fldPath.Child(r.name), ""))
		}
	}
	if spec.FSGroupPolicy == nil {
		errs = append(errs, field.Required(fldPath.Child("fsGroupPolicy"), ""))
	} else {
		errs = append(errs, enum(*spec.FSGroupPolicy, fldPath.Child("fsGroupPolicy"), fsGroupPolicies...)...)
	}
	for i, m := range spec.VolumeLifecycleModes {
		errs = append(errs, enum(m, fldPath.Child("volumeLifecycleModes").Index(i), volumeLifecycleModes...)...)
	}
	audiences := sets.New[string]()
	for i, t := range spec.TokenRequests {
		p := fldPath.Child("tokenRequests").Index(i)
		if audiences.Has(t.Audience) {
			errs = append(errs, field.Duplicate(p.Child("audience"), t.Audience))
		}
		audiences.Insert(t.Audience)
		if t.ExpirationSeconds != nil && *t.ExpirationSeconds < 600 {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
	}
	if s := spec.NodeAllocatableUpdatePeriodSeconds; s != nil && *s < 10 {
		errs = append(errs, field.Invalid(fldPath.Child("nodeAllocatableUpdatePeriodSeconds"), *s, "must be greater than or equal to 10 seconds"))
	}
	return errs
}

func csiDriverChange(d, old *storagev1.CSIDriver) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, immutable(d.Spec.AttachRequired, old.Spec.AttachRequired, specPath.Child("attachRequired"))...)
	errs = append(errs, immutable(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, specPath.Child("volumeLifecycleModes"))...)
	return errs
}

func csiNodeRules(n *storagev1.CSINode) field.ErrorList {
	var errs field.ErrorList
	p := specPath.Child("drivers")
	names := sets.New[string]()
	for i, d := range n.Spec.Drivers {
		dp := p.Index(i)
		errs = append(errs, csiDriverName(d.Name, dp.Child("name"))...)
		if names.Has(d.Name) {
			errs = append(errs, field.Duplicate(dp.Child("name"), d.Name))
		}
		names.Insert(d.Name)
		switch {
		case d.NodeID == "":
			errs = append(errs, field.Required(dp.Child("nodeID"), ""))
		case len(d.NodeID) > csiNodeIDMaxLength:
			errs = append(errs, field.TooLong(dp.Child("nodeID"), "", csiNodeIDMaxLength))
		}
		keys := sets.New[string]()
		for j, k := range d.TopologyKeys {
			kp := dp.Child("topologyKeys").Index(j)
			if k == "" {
				errs = append(errs, field.Required(kp, ""))
				continue
			}
			if keys.Has(k) {
				errs = append(errs, field.Duplicate(kp, k))
			}
			keys.Insert(k)
			errs = append(errs, qualifiedName(k, kp)...)
		}
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			errs = append(errs, nonNegative(int64(*d.Allocatable.Count), dp.Child("allocatable", "count"))...)
		}
	}
	return errs
}

// csiNodeChange lets drivers come and go but keeps a registered driver's
// identity fixed.
func csiNodeChange(n, old *storagev1.CSINode) field.ErrorList {
	var errs field.ErrorList
	for _, od := range old.Spec.Drivers {
		for i, d := range n.Spec.Drivers {
			if d.Name != od.Name {
				continue
			}
			p := specPath.Child("drivers").Index(i)
			errs = append(errs, immutable(d.NodeID, od.NodeID, p.Child("nodeID"))...)
			errs = append(errs, immutable(d.TopologyKeys, od.TopologyKeys, p.Child("topologyKeys"))...)
		}
	}
	return errs
}

func volumeAttachmentRules(va *storagev1.VolumeAttachment) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, csiDriverName(va.Spec.Attacher, specPath.Child("attacher"))...)
	if va.Spec.NodeName == "" {
		errs = append(errs, field.Required(specPath.Child("nodeName"), ""))
	} else {
		errs = append(errs, dns1123Subdomain(va.Spec.NodeName, specPath.Child("nodeName"))...)
	}
	src, p := va.Spec.Source, specPath.Child("source")
	switch {
	case (src.PersistentVolumeName == nil) == (src.InlineVolumeSpec == nil):
		errs = append(errs, field.Required(p, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		errs = append(errs, field.Required(p.Child("persistentVolumeName"), "must specify non empty persistentVolumeName"))
	case src.InlineVolumeSpec != nil:
		if src.InlineVolumeSpec.CSI == nil {
			errs = append(errs, field.Required(p.Child("inlineVolumeSpec", "csi"), "must specify a CSI volume source"))
		}
	}
	errs = append(errs, volumeAttachmentStatus(&va.Status)...)
	return errs
}

func volumeAttachmentStatus(s *storagev1.VolumeAttachmentStatus) field.ErrorList {
	var errs field.ErrorList
	const maxMessage = 1024
	if e := s.AttachError; e != nil && len(e.Message) > maxMessage {
		errs = append(errs, field.TooLong(field.NewPath("status", "attachError", "message"), "", maxMessage))
	}
	if e := s.DetachError; e != nil && len(e.Message) > maxMessage {
		errs = append(errs, field.TooLong(field.NewPath("status", "detachError", "message"), "", maxMessage))
	}
	return errs
}

func volumeAttachmentChange(va, old *storagev1.VolumeAttachment) field.ErrorList {
	if !equality.Semantic.DeepEqual(va.Spec, old.Spec) {
		return field.ErrorList{field.Invalid(specPath, va.Spec, "field is immutable")}
	}
	return nil
}

func volumeAttachmentStatusChange(va, old *storagev1.VolumeAttachment) field.ErrorList {
	return volumeAttachmentStatus(&va.Status)
}
