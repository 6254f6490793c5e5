package validation

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*corev1.ConfigMap]{spec: configMapRules, change: configMapChange})
	register(&kind[*corev1.Secret]{spec: secretRules, change: secretChange})
	register(&kind[*corev1.ServiceAccount]{spec: serviceAccountRules})
	register(&kind[*corev1.PodTemplate]{spec: func(t *corev1.PodTemplate) field.ErrorList {
		return podTemplateSpec(&t.Template, field.NewPath("template"))
	}})
	register(&kind[*corev1.ReplicationController]{
		spec:         rcRules,
		statusChange: func(rc, old *corev1.ReplicationController) field.ErrorList { return rcStatus(&rc.Status) },
	})
}

// maxDataSize bounds ConfigMaps and Secrets so they fit in an etcd value.
const maxDataSize = 1 * 1024 * 1024

func dataKeys[V string | []byte](data map[string]V, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(data) {
		errs = append(errs, each(fldPath.Key(k), k, validation.IsConfigMapKey(k))...)
	}
	return errs
}

func configMapRules(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, dataKeys(cm.Data, field.NewPath("data"))...)
	errs = append(errs, dataKeys(cm.BinaryData, field.NewPath("binaryData"))...)
	for k := range cm.BinaryData {
		if _, dup := cm.Data[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, "duplicate of key present in data"))
		}
	}
	if size := sizeOf(cm.Data) + sizeOf(cm.BinaryData); size > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", maxDataSize))
	}
	return errs
}

// configMapChange enforces immutable: true, which may not be undone.
func configMapChange(cm, old *corev1.ConfigMap) field.ErrorList {
	if old.Immutable == nil || !*old.Immutable {
		return nil
	}
	var errs field.ErrorList
	if cm.Immutable == nil || !*cm.Immutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if !equality.Semantic.DeepEqual(cm.Data, old.Data) {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	if !equality.Semantic.DeepEqual(cm.BinaryData, old.BinaryData) {
		errs = append(errs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
	}
	return errs
}

func secretRules(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	errs = append(errs, dataKeys(s.Data, dataPath)...)
	if size := sizeOf(s.Data); size > maxDataSize {
		errs = append(errs, field.TooLong(dataPath, "", maxDataSize))
	}
	// Requirements of the well-known types, which consumers rely on.
	need := func(key string) {
		if _, ok := s.Data[key]; !ok {
			errs = append(errs, field.Required(dataPath.Key(key), ""))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		annPath := metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey)
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(annPath, ""))
		}
	case corev1.SecretTypeDockercfg:
		if v, ok := s.Data[corev1.DockerConfigKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(corev1.DockerConfigKey), ""))
		} else if err := json.Unmarshal(v, &map[string]any{}); err != nil {
			errs = append(errs, field.Invalid(dataPath.Key(corev1.DockerConfigKey), "<secret contents redacted>", err.Error()))
		}
	case corev1.SecretTypeDockerConfigJson:
		if v, ok := s.Data[corev1.DockerConfigJsonKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(corev1.DockerConfigJsonKey), ""))
		} else if err := json.Unmarshal(v, &map[string]any{}); err != nil {
			errs = append(errs, field.Invalid(dataPath.Key(corev1.DockerConfigJsonKey), "<secret contents redacted>", err.Error()))
		}
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""))
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		need(corev1.TLSCertKey)
		need(corev1.TLSPrivateKeyKey)
	case corev1.SecretTypeOpaque, "":
	default:
		errs = append(errs, qualifiedName(string(s.Type), field.NewPath("type"))...)
	}
	return errs
}

func secretChange(s, old *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, immutable(s.Type, old.Type, field.NewPath("type"))...)
	if old.Immutable != nil && *old.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !equality.Semantic.DeepEqual(s.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return errs
}

func serviceAccountRules(sa *corev1.ServiceAccount) field.ErrorList {
	var errs field.ErrorList
	for i, s := range sa.Secrets {
		if s.Name == "" {
			errs = append(errs, field.Required(field.NewPath("secrets").Index(i).Child("name"), ""))
		}
	}
	for i, s := range sa.ImagePullSecrets {
		if s.Name == "" {
			errs = append(errs, field.Required(field.NewPath("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	return errs
}

// rcRules checks a ReplicationController: a non-empty selector matching
// the template, which must restart its pods forever.
func rcRules(rc *corev1.ReplicationController) field.ErrorList {
	var errs field.ErrorList
	spec := &rc.Spec
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if labels.Set(spec.Selector).AsSelector().Empty() {
		errs = append(errs, field.Required(specPath.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	if spec.Replicas != nil {
		errs = append(errs, nonNegative(int64(*spec.Replicas), specPath.Child("replicas"))...)
	}
	tp := specPath.Child("template")
	if spec.Template == nil {
		return append(errs, field.Required(tp, ""))
	}
	if sel := labels.Set(spec.Selector).AsSelector(); !sel.Empty() && !sel.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, podTemplateSpec(spec.Template, tp)...)
	errs = append(errs, alwaysRestart(spec.Template, tp)...)
	if spec.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// alwaysRestart requires the template of a long-running workload to
// restart its containers forever.
func alwaysRestart(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		return field.ErrorList{field.NotSupported(fldPath.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)})}
	}
	return nil
}

func rcStatus(st *corev1.ReplicationControllerStatus) field.ErrorList {
	return replicaCounts(field.NewPath("status"), int64(st.Replicas), int64(st.FullyLabeledReplicas), int64(st.ReadyReplicas), int64(st.AvailableReplicas), st.ObservedGeneration)
}

// replicaCounts checks the counters controllers report in status; each
// subset count may not exceed the total.
func replicaCounts(fldPath *field.Path, replicas, fullyLabeled, ready, available, observedGeneration int64) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, nonNegative(replicas, fldPath.Child("replicas"))...)
	errs = append(errs, nonNegative(fullyLabeled, fldPath.Child("fullyLabeledReplicas"))...)
	errs = append(errs, nonNegative(ready, fldPath.Child("readyReplicas"))...)
	errs = append(errs, nonNegative(available, fldPath.Child("availableReplicas"))...)
	errs = append(errs, nonNegative(observedGeneration, fldPath.Child("observedGeneration"))...)
	const msg = "cannot be greater than status.replicas"
	if fullyLabeled > replicas {
		errs = append(errs, field.Invalid(fldPath.Child("fullyLabeledReplicas"), fullyLabeled, msg))
	}
	if ready > replicas {
		errs = append(errs, field.Invalid(fldPath.Child("readyReplicas"), ready, msg))
	}
	if available > replicas {
		errs = append(errs, field.Invalid(fldPath.Child("availableReplicas"), available, msg))
	}
	if available > ready {
		errs = append(errs, field.Invalid(fldPath.Child("availableReplicas"), available, "cannot be greater than readyReplicas"))
	}
	return errs
}
