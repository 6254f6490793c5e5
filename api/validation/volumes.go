package validation

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive"

// volumes checks spec.volumes and returns the sources by name for the
// mounts to refer to.
func volumes(vols []corev1.Volume, fldPath *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	byName := map[string]corev1.VolumeSource{}
	for i := range vols {
		v, p := &vols[i], fldPath.Index(i)
		namePath := p.Child("name")
		vErrs := volumeSource(&v.VolumeSource, p)
		if v.Name == "" {
			vErrs = append(vErrs, field.Required(namePath, ""))
		} else {
			vErrs = append(vErrs, dns1123Label(v.Name, namePath)...)
		}
		if _, dup := byName[v.Name]; dup {
			vErrs = append(vErrs, field.Duplicate(namePath, v.Name))
		}
		// A broken volume stays known by name so that its mounts are not
		// also reported as missing.
		byName[v.Name] = v.VolumeSource
		errs = append(errs, vErrs...)
	}
	return byName, errs
}

// setSources lists the JSON names of the non-nil pointer fields of a union
// struct such as VolumeSource.
func setSources(union any) []string {
	v := reflect.ValueOf(union).Elem()
	var set []string
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			set = append(set, name)
		}
	}
	return set
}

// volumeSource requires exactly one source and checks the common ones.
func volumeSource(src *corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
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
	case src.EmptyDir != nil:
		if src.EmptyDir.SizeLimit != nil && src.EmptyDir.SizeLimit.Sign() < 0 {
			errs = append(errs, field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
		}
		m := src.EmptyDir.Medium
		if m != corev1.StorageMediumDefault && m != corev1.StorageMediumMemory && m != corev1.StorageMediumHugePages && !strings.HasPrefix(string(m), string(corev1.StorageMediumHugePagesPrefix)) {
			errs = append(errs, field.NotSupported(p.Child("medium"), m, []string{"", "Memory", "HugePages", "HugePages-<size>"}))
		}
	case src.GitRepo != nil:
		if src.GitRepo.Repository == "" {
			errs = append(errs, field.Required(p.Child("repository"), ""))
		}
		errs = append(errs, noBacksteps(src.GitRepo.Directory, p.Child("directory"))...)
	case src.Secret != nil:
		if src.Secret.SecretName == "" {
			errs = append(errs, field.Required(p.Child("secretName"), ""))
		}
		errs = append(errs, keyToPaths(src.Secret.Items, p.Child("items"))...)
		errs = append(errs, fileMode(src.Secret.DefaultMode, p.Child("defaultMode"))...)
	case src.ConfigMap != nil:
		if src.ConfigMap.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		errs = append(errs, keyToPaths(src.ConfigMap.Items, p.Child("items"))...)
		errs = append(errs, fileMode(src.ConfigMap.DefaultMode, p.Child("defaultMode"))...)
	case src.PersistentVolumeClaim != nil:
		if src.PersistentVolumeClaim.ClaimName == "" {
			errs = append(errs, field.Required(p.Child("claimName"), ""))
		}
	case src.NFS != nil:
		if src.NFS.Server == "" {
			errs = append(errs, field.Required(p.Child("server"), ""))
		}
		if src.NFS.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else if !strings.HasPrefix(src.NFS.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), src.NFS.Path, "must be an absolute path"))
		}
	case src.ISCSI != nil:
		errs = append(errs, iscsiSource(src.ISCSI.TargetPortal, src.ISCSI.IQN, src.ISCSI.Lun, p)...)
	case src.DownwardAPI != nil:
		errs = append(errs, downwardAPIFiles(src.DownwardAPI.Items, p.Child("items"))...)
		errs = append(errs, fileMode(src.DownwardAPI.DefaultMode, p.Child("defaultMode"))...)
	case src.Projected != nil:
		errs = append(errs, projectedSource(src.Projected, p)...)
	case src.CSI != nil:
		if src.CSI.Driver == "" {
			errs = append(errs, field.Required(p.Child("driver"), ""))
		} else {
			errs = append(errs, csiDriverName(src.CSI.Driver, p.Child("driver"))...)
		}
	case src.Ephemeral != nil:
		errs = append(errs, ephemeralSource(src.Ephemeral, p)...)
	case src.Image != nil:
		if src.Image.Reference == "" {
			errs = append(errs, field.Required(p.Child("reference"), ""))
		}
		errs = append(errs, optionalEnum(src.Image.PullPolicy, p.Child("pullPolicy"), supportedPullPolicies...)...)
	case src.RBD != nil:
		if len(src.RBD.CephMonitors) == 0 {
			errs = append(errs, field.Required(p.Child("monitors"), ""))
		}
		if src.RBD.RBDImage == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
	case src.CephFS != nil:
		if len(src.CephFS.Monitors) == 0 {
			errs = append(errs, field.Required(p.Child("monitors"), ""))
		}
	case src.FC != nil:
		if len(src.FC.TargetWWNs) == 0 && len(src.FC.WWIDs) == 0 {
			errs = append(errs, field.Required(p.Child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
		}
	case src.Glusterfs != nil:
		if src.Glusterfs.EndpointsName == "" {
			errs = append(errs, field.Required(p.Child("endpoints"), ""))
		}
		if src.Glusterfs.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
	}
	return errs
}

var hostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory, corev1.HostPathFileOrCreate,
	corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev,
}

func hostPathSource(hp *corev1.HostPathVolumeSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if hp.Path == "" {
		errs = append(errs, field.Required(fldPath.Child("path"), ""))
	} else {
		errs = append(errs, noBacksteps(hp.Path, fldPath.Child("path"))...)
	}
	if hp.Type != nil && *hp.Type != "" {
		errs = append(errs, optionalEnum(*hp.Type, fldPath.Child("type"), hostPathTypes...)...)
	}
	return errs
}

func iscsiSource(portal, iqn string, lun int32, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if portal == "" {
		errs = append(errs, field.Required(fldPath.Child("targetPortal"), ""))
	}
	if iqn == "" {
		errs = append(errs, field.Required(fldPath.Child("iqn"), ""))
	}
	if lun < 0 || lun > 255 {
		errs = append(errs, int32Range(int64(lun), 0, 255, fldPath.Child("lun"))...)
	}
	return errs
}

// noBacksteps rejects '..' path elements, which could escape the intended
// directory.
func noBacksteps(p string, fldPath *field.Path) field.ErrorList {
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return field.ErrorList{field.Invalid(fldPath, p, "must not contain '..'")}
		}
	}
	return nil
}

func fileMode(mode *int32, fldPath *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(fldPath, *mode, fileModeErrorMsg)}
	}
	return nil
}

// volumeFilePath checks a path a volume writes a file to.
func volumeFilePath(p string, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	errs := localDescendingPath(p, fldPath)
	if strings.HasPrefix(p, "..") {
		errs = append(errs, field.Invalid(fldPath, p, "must not start with '..'"))
	}
	return errs
}

func keyToPaths(items []corev1.KeyToPath, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, kp := range items {
		p := fldPath.Index(i)
		if kp.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
		}
		errs = append(errs, volumeFilePath(kp.Path, p.Child("path"))...)
		errs = append(errs, fileMode(kp.Mode, p.Child("mode"))...)
	}
	return errs
}

func downwardAPIFiles(items []corev1.DownwardAPIVolumeFile, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range items {
		p := fldPath.Index(i)
		errs = append(errs, volumeFilePath(f.Path, p.Child("path"))...)
		errs = append(errs, fileMode(f.Mode, p.Child("mode"))...)
		switch {
		case f.FieldRef != nil && f.ResourceFieldRef != nil:
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		case f.FieldRef != nil:
			errs = append(errs, objectFieldSelector(f.FieldRef, volumeFieldPaths, p.Child("fieldRef"))...)
		case f.ResourceFieldRef != nil:
			errs = append(errs, resourceFieldSelector(f.ResourceFieldRef, true, p.Child("resourceFieldRef"))...)
		default:
			errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
		}
	}
	return errs
}

func projectedSource(pr *corev1.ProjectedVolumeSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, fileMode(pr.DefaultMode, fldPath.Child("defaultMode"))...)
	paths := sets.New[string]()
	addPath := func(path string, p *field.Path) {
		if path == "" {
			return
		}
		if paths.Has(path) {
			errs = append(errs, field.Invalid(p, path, "conflicting duplicate paths"))
		}
		paths.Insert(path)
	}
	for i := range pr.Sources {
		src, p := &pr.Sources[i], fldPath.Child("sources").Index(i)
		set := setSources(src)
		if len(set) == 0 {
			errs = append(errs, field.Required(p, "must specify exactly 1 projection type"))
			continue
		}
		for _, name := range set[1:] {
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 volume type per source"))
		}
		switch {
		case src.Secret != nil:
			errs = append(errs, keyToPaths(src.Secret.Items, p.Child("secret", "items"))...)
			for j, kp := range src.Secret.Items {
				addPath(kp.Path, p.Child("secret", "items").Index(j).Child("path"))
			}
		case src.ConfigMap != nil:
			errs = append(errs, keyToPaths(src.ConfigMap.Items, p.Child("configMap", "items"))...)
			for j, kp := range src.ConfigMap.Items {
				addPath(kp.Path, p.Child("configMap", "items").Index(j).Child("path"))
			}
		case src.DownwardAPI != nil:
			errs = append(errs, downwardAPIFiles(src.DownwardAPI.Items, p.Child("downwardAPI", "items"))...)
			for j, f := range src.DownwardAPI.Items {
				addPath(f.Path, p.Child("downwardAPI", "items").Index(j).Child("path"))
			}
		case src.ServiceAccountToken != nil:
			t, tp := src.ServiceAccountToken, p.Child("serviceAccountToken")
			if t.ExpirationSeconds != nil {
				if *t.ExpirationSeconds < 10*60 {
					errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
				} else if *t.ExpirationSeconds > math.MaxUint32 {
					errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
				}
			}
			errs = append(errs, volumeFilePath(t.Path, tp.Child("path"))...)
			addPath(t.Path, tp.Child("path"))
		case src.ClusterTrustBundle != nil:
			b, bp := src.ClusterTrustBundle, p.Child("clusterTrustBundle")
			if (b.Name == nil) == (b.SignerName == nil) {
				errs = append(errs, field.Invalid(bp, "", "exactly one of name and signerName must be set"))
			}
			errs = append(errs, volumeFilePath(b.Path, bp.Child("path"))...)
			addPath(b.Path, bp.Child("path"))
		case src.PodCertificate != nil:
			errs = append(errs, podCertificateSource(src.PodCertificate, p.Child("podCertificate"), addPath)...)
		}
	}
	return errs
}

// podCertificateKeyTypes are the keys a kubelet makes for a pod's
// certificate, upstream's list.
var podCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// podCertificateSource checks a podCertificate projection as upstream
// does: a signer, a key type the kubelet makes, a lifetime the
// PodCertificateRequest it becomes may ask for, and at least one file.
func podCertificateSource(c *corev1.PodCertificateProjection, cp *field.Path, addPath func(string, *field.Path)) field.ErrorList {
	errs := signerName(c.SignerName, cp.Child("signerName"))
	for k := range c.UserAnnotations {
		errs = append(errs, qualifiedName(k, cp.Child("userAnnotations"))...)
	}
	if !slices.Contains(podCertificateKeyTypes, c.KeyType) {
		errs = append(errs, field.NotSupported(cp.Child("keyType"), c.KeyType, podCertificateKeyTypes))
	}
	if m := c.MaxExpirationSeconds; m != nil {
		if *m < pcrMinLifetime {
			errs = append(errs, field.Invalid(cp.Child("maxExpirationSeconds"), *m, fmt.Sprintf("if provided, maxExpirationSeconds must be >= %d", pcrMinLifetime)))
		}
		hi := pcrMaxLifetime
		if kubernetesSigner(c.SignerName) {
			hi = pcrMaxKubernetesLifetime
		}
		if int(*m) > hi {
			errs = append(errs, field.Invalid(cp.Child("maxExpirationSeconds"), *m, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", hi)))
		}
	}
	paths := 0
	for _, fp := range []struct{ name, val string }{{"credentialBundlePath", c.CredentialBundlePath}, {"keyPath", c.KeyPath}, {"certificateChainPath", c.CertificateChainPath}} {
		if fp.val != "" {
			paths++
			errs = append(errs, volumeFilePath(fp.val, cp.Child(fp.name))...)
			addPath(fp.val, cp.Child(fp.name))
		}
	}
	if paths == 0 {
		errs = append(errs, field.Required(cp, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	return errs
}

func ephemeralSource(e *corev1.EphemeralVolumeSource, fldPath *field.Path) field.ErrorList {
	t := e.VolumeClaimTemplate
	p := fldPath.Child("volumeClaimTemplate")
	if t == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	// The claim gets a generated name, so only labels and annotations of
	// the template's metadata matter.
	if t.Name != "" || t.GenerateName != "" || t.Namespace != "" {
		errs = append(errs, field.Forbidden(p.Child("metadata"), "only labels and annotations may be set"))
	}
	errs = append(errs, pvcSpec(&t.Spec, p.Child("spec"))...)
	return errs
}

var mountPropagationModes = []corev1.MountPropagationMode{corev1.MountPropagationNone, corev1.MountPropagationHostToContainer, corev1.MountPropagationBidirectional}
var recursiveReadOnlyModes = []corev1.RecursiveReadOnlyMode{corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyIfPossible, corev1.RecursiveReadOnlyEnabled}

// volumeMounts checks a container's mounts and block devices against the
// pod's volumes.
func (pc *podContext) volumeMounts(mounts []corev1.VolumeMount, devices []corev1.VolumeDevice, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	mountPath := fldPath.Child("volumeMounts")
	paths := sets.New[string]()
	deviceNames, devicePaths := sets.New[string](), sets.New[string]()
	for _, d := range devices {
		deviceNames.Insert(d.Name)
		devicePaths.Insert(d.DevicePath)
	}
	for i, m := range mounts {
		p := mountPath.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if _, ok := pc.volumes[m.Name]; !ok {
			errs = append(errs, field.NotFound(p.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(p.Child("mountPath"), ""))
		} else if paths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
		if deviceNames.Has(m.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		if devicePaths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(p.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
		}
		if m.SubPath != "" {
			errs = append(errs, localDescendingPath(m.SubPath, p.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, localDescendingPath(m.SubPathExpr, p.Child("subPathExpr"))...)
		}
		if m.MountPropagation != nil {
			errs = append(errs, enum(*m.MountPropagation, p.Child("mountPropagation"), mountPropagationModes...)...)
		}
		if m.RecursiveReadOnly != nil {
			rp := p.Child("recursiveReadOnly")
			errs = append(errs, enum(*m.RecursiveReadOnly, rp, recursiveReadOnlyModes...)...)
			if *m.RecursiveReadOnly != corev1.RecursiveReadOnlyDisabled && !m.ReadOnly {
				errs = append(errs, field.Forbidden(rp, "may only be specified when readOnly is true"))
			}
			if *m.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled && m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
				errs = append(errs, field.Forbidden(rp, "may only be specified when mountPropagation is None or not specified"))
			}
		}
	}
	devPath := fldPath.Child("volumeDevices")
	seenDevices := sets.New[string]()
	for i, d := range devices {
		p := devPath.Index(i)
		if d.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if src, ok := pc.volumes[d.Name]; !ok {
			errs = append(errs, field.NotFound(p.Child("name"), d.Name))
		} else if src.PersistentVolumeClaim == nil && src.Ephemeral == nil {
			errs = append(errs, field.Invalid(p.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(p.Child("devicePath"), ""))
		} else {
			if seenDevices.Has(d.DevicePath) {
				errs = append(errs, field.Invalid(p.Child("devicePath"), d.DevicePath, "must be unique"))
			}
			errs = append(errs, noBacksteps(d.DevicePath, p.Child("devicePath"))...)
		}
		seenDevices.Insert(d.DevicePath)
	}
	return errs
}
