package validation

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var procMountTypes = []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}
var seccompTypes = []corev1.SeccompProfileType{corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined, corev1.SeccompProfileTypeLocalhost}
var appArmorTypes = []corev1.AppArmorProfileType{corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined, corev1.AppArmorProfileTypeLocalhost}

// securityContext checks a container's security context.
func securityContext(sc *corev1.SecurityContext, fldPath *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.RunAsUser != nil {
		errs = append(errs, each(fldPath.Child("runAsUser"), *sc.RunAsUser, validation.IsValidUserID(*sc.RunAsUser))...)
	}
	if sc.RunAsGroup != nil {
		errs = append(errs, each(fldPath.Child("runAsGroup"), *sc.RunAsGroup, validation.IsValidGroupID(*sc.RunAsGroup))...)
	}
	if sc.ProcMount != nil {
		errs = append(errs, enum(*sc.ProcMount, fldPath.Child("procMount"), procMountTypes...)...)
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "SYS_ADMIN" || c == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	errs = append(errs, seccompProfile(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	errs = append(errs, appArmorProfile(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	errs = append(errs, windowsOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	return errs
}

func seccompProfile(sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	errs := enum(sp.Type, fldPath.Child("type"), seccompTypes...)
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil || *sp.LocalhostProfile == "" {
			errs = append(errs, field.Required(fldPath.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			errs = append(errs, localDescendingPath(*sp.LocalhostProfile, fldPath.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		errs = append(errs, field.Invalid(fldPath.Child("localhostProfile"), sp, "can only be set when seccomp type is Localhost"))
	}
	return errs
}

func appArmorProfile(ap *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	if ap == nil {
		return nil
	}
	errs := enum(ap.Type, fldPath.Child("type"), appArmorTypes...)
	if ap.Type == corev1.AppArmorProfileTypeLocalhost {
		if ap.LocalhostProfile == nil || *ap.LocalhostProfile == "" {
			errs = append(errs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		}
	} else if ap.LocalhostProfile != nil {
		errs = append(errs, field.Invalid(fldPath.Child("localhostProfile"), ap, "can only be set when AppArmor type is Localhost"))
	}
	return errs
}

func windowsOptions(w *corev1.WindowsSecurityContextOptions, fldPath *field.Path) field.ErrorList {
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	if w.GMSACredentialSpecName != nil {
		errs = append(errs, dns1123Subdomain(*w.GMSACredentialSpecName, fldPath.Child("gmsaCredentialSpecName"))...)
	}
	if w.RunAsUserName != nil && (*w.RunAsUserName == "" || len(*w.RunAsUserName) > 256) {
		errs = append(errs, field.Invalid(fldPath.Child("runAsUserName"), *w.RunAsUserName, "runAsUserName's length must be between 1 and 256 characters"))
	}
	return errs
}

// sysctlRegexp is upstream's sysctl name syntax: dot- or slash-separated
// segments of lower-case alphanumerics, '_' and '-'.
var sysctlRegexp = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

const sysctlMaxLength = 253

var fsGroupChangePolicies = []corev1.PodFSGroupChangePolicy{corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways}
var supplementalGroupsPolicies = []corev1.SupplementalGroupsPolicy{corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict}
var seLinuxChangePolicies = []corev1.PodSELinuxChangePolicy{corev1.SELinuxChangePolicyRecursive, corev1.SELinuxChangePolicyMountOption}

// podSecurityContext checks spec.securityContext.
func podSecurityContext(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		errs = append(errs, each(fldPath.Child("fsGroup"), *sc.FSGroup, validation.IsValidGroupID(*sc.FSGroup))...)
	}
	if sc.RunAsUser != nil {
		errs = append(errs, each(fldPath.Child("runAsUser"), *sc.RunAsUser, validation.IsValidUserID(*sc.RunAsUser))...)
	}
	if sc.RunAsGroup != nil {
		errs = append(errs, each(fldPath.Child("runAsGroup"), *sc.RunAsGroup, validation.IsValidGroupID(*sc.RunAsGroup))...)
	}
	for i, g := range sc.SupplementalGroups {
		errs = append(errs, each(fldPath.Child("supplementalGroups").Index(i), g, validation.IsValidGroupID(g))...)
	}
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace && spec.HostPID {
		errs = append(errs, field.Invalid(fldPath.Child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	names := sets.New[string]()
	for i, s := range sc.Sysctls {
		p := fldPath.Child("sysctls").Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(p, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlRegexp.MatchString(s.Name):
			errs = append(errs, field.Invalid(p, s.Name, "must have at most 253 characters and match regex "+sysctlRegexp.String()))
		case names.Has(s.Name):
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		names.Insert(s.Name)
	}
	if sc.FSGroupChangePolicy != nil {
		errs = append(errs, enum(*sc.FSGroupChangePolicy, fldPath.Child("fsGroupChangePolicy"), fsGroupChangePolicies...)...)
	}
	if sc.SupplementalGroupsPolicy != nil {
		errs = append(errs, enum(*sc.SupplementalGroupsPolicy, fldPath.Child("supplementalGroupsPolicy"), supplementalGroupsPolicies...)...)
	}
	if sc.SELinuxChangePolicy != nil {
		errs = append(errs, enum(*sc.SELinuxChangePolicy, fldPath.Child("seLinuxChangePolicy"), seLinuxChangePolicies...)...)
	}
	errs = append(errs, seccompProfile(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	errs = append(errs, appArmorProfile(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	errs = append(errs, windowsOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	return errs
}
