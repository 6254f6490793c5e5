package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// envFieldPaths are the pod fields the downward API can put in an
// environment variable, besides labels['x'] and annotations['x'].
var envFieldPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.uid",
	"spec.nodeName", "spec.serviceAccountName",
	"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
}

// volumeFieldPaths are the pod fields a downwardAPI volume can expose.
var volumeFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations"}

func envVars(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, each(p.Child("name"), ev.Name, validation.IsRelaxedEnvVarName(ev.Name))...)
		}
		errs = append(errs, envVarSource(ev, p.Child("valueFrom"))...)
	}
	return errs
}

func envVarSource(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	src := ev.ValueFrom
	if src == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	if src.FieldRef != nil {
		n++
		errs = append(errs, objectFieldSelector(src.FieldRef, envFieldPaths, fldPath.Child("fieldRef"))...)
	}
	if src.ResourceFieldRef != nil {
		n++
		errs = append(errs, resourceFieldSelector(src.ResourceFieldRef, false, fldPath.Child("resourceFieldRef"))...)
	}
	if src.ConfigMapKeyRef != nil {
		n++
		errs = append(errs, keyRef(src.ConfigMapKeyRef.Name, src.ConfigMapKeyRef.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if src.SecretKeyRef != nil {
		n++
		errs = append(errs, keyRef(src.SecretKeyRef.Name, src.SecretKeyRef.Key, fldPath.Child("secretKeyRef"))...)
	}
	if src.FileKeyRef != nil {
		n++
		p := fldPath.Child("fileKeyRef")
		if src.FileKeyRef.VolumeName == "" {
			errs = append(errs, field.Required(p.Child("volumeName"), ""))
		}
		if src.FileKeyRef.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else {
			errs = append(errs, localDescendingPath(src.FileKeyRef.Path, p.Child("path"))...)
		}
		if src.FileKeyRef.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case n > 1:
		errs = append(errs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	if ev.Value != "" {
		errs = append(errs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	}
	return errs
}

func keyRef(name, key string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	} else {
		errs = append(errs, dns1123Subdomain(name, fldPath.Child("name"))...)
	}
	if key == "" {
		errs = append(errs, field.Required(fldPath.Child("key"), ""))
	} else {
		errs = append(errs, each(fldPath.Child("key"), key, validation.IsConfigMapKey(key))...)
	}
	return errs
}

// objectFieldSelector checks a downward API field reference against the
// paths the consumer supports.
func objectFieldSelector(fs *corev1.ObjectFieldSelector, supported []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if fs.APIVersion == "" {
		errs = append(errs, field.Required(fldPath.Child("apiVersion"), ""))
		return errs
	}
	if fs.APIVersion != "v1" {
		errs = append(errs, field.Invalid(fldPath.Child("apiVersion"), fs.APIVersion, "only \"v1\" is supported"))
		return errs
	}
	p := fldPath.Child("fieldPath")
	if fs.FieldPath == "" {
		return append(errs, field.Required(p, ""))
	}
	for _, prefix := range []string{"metadata.labels", "metadata.annotations"} {
		key, ok := strings.CutPrefix(fs.FieldPath, prefix+"['")
		if !ok {
			continue
		}
		key, ok = strings.CutSuffix(key, "']")
		if !ok {
			return append(errs, field.Invalid(p, fs.FieldPath, "error converting fieldPath: field label not supported"))
		}
		if prefix == "metadata.labels" {
			return append(errs, qualifiedName(key, p)...)
		}
		return append(errs, each(p, key, validation.IsQualifiedName(strings.ToLower(key)))...)
	}
	for _, s := range supported {
		if fs.FieldPath == s {
			return errs
		}
	}
	return append(errs, field.NotSupported(p, fs.FieldPath, supported))
}

var resourceFieldRefs = sets.New(
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage",
)

// resourceFieldSelector checks a reference to a container's resources;
// volumes must name the container, environment variables default to their own.
func resourceFieldSelector(fs *corev1.ResourceFieldSelector, needContainer bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if needContainer && fs.ContainerName == "" {
		errs = append(errs, field.Required(fldPath.Child("containerName"), ""))
	}
	if fs.Resource == "" {
		return append(errs, field.Required(fldPath.Child("resource"), ""))
	}
	isHuge := strings.HasPrefix(fs.Resource, "limits.hugepages-") || strings.HasPrefix(fs.Resource, "requests.hugepages-")
	if !resourceFieldRefs.Has(fs.Resource) && !isHuge {
		return append(errs, field.NotSupported(fldPath.Child("resource"), fs.Resource, sets.List(resourceFieldRefs)))
	}
	if fs.Divisor.IsZero() {
		return errs
	}
	d := fs.Divisor
	switch {
	case strings.HasSuffix(fs.Resource, ".cpu"):
		if !oneOf(d, "1m", "1") {
			errs = append(errs, field.Invalid(fldPath.Child("divisor"), d.String(), "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	default:
		if !oneOf(d, "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei") {
			errs = append(errs, field.Invalid(fldPath.Child("divisor"), d.String(), "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"))
		}
	}
	return errs
}

func oneOf(q resource.Quantity, values ...string) bool {
	for _, v := range values {
		if q.Cmp(resource.MustParse(v)) == 0 {
			return true
		}
	}
	return false
}

func envFrom(sources []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ef := range sources {
		p := fldPath.Index(i)
		if ef.Prefix != "" {
			errs = append(errs, each(p.Child("prefix"), ef.Prefix, validation.IsRelaxedEnvVarName(ef.Prefix))...)
		}
		n := 0
		if ef.ConfigMapRef != nil {
			n++
			errs = append(errs, refName(ef.ConfigMapRef.Name, p.Child("configMapRef", "name"))...)
		}
		if ef.SecretRef != nil {
			n++
			errs = append(errs, refName(ef.SecretRef.Name, p.Child("secretRef", "name"))...)
		}
		switch {
		case n == 0:
			errs = append(errs, field.Invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

// refName checks a required reference to an object named by a DNS subdomain.
func refName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return dns1123Subdomain(name, fldPath)
}
