package validation

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*appsv1.Deployment]{
		spec: deploymentRules,
		change: func(d, old *appsv1.Deployment) field.ErrorList {
			return selectorChange(d.Spec.Selector, old.Spec.Selector)
		},
		statusChange: func(d, old *appsv1.Deployment) field.ErrorList {
			st := &d.Status
			errs := replicaCounts(field.NewPath("status"), int64(st.Replicas), int64(st.Replicas), int64(st.ReadyReplicas), int64(st.AvailableReplicas), st.ObservedGeneration)
			errs = append(errs, nonNegative(int64(st.UpdatedReplicas), field.NewPath("status", "updatedReplicas"))...)
			errs = append(errs, nonNegative(int64(st.UnavailableReplicas), field.NewPath("status", "unavailableReplicas"))...)
			errs = append(errs, collisionCount(st.CollisionCount, old.Status.CollisionCount)...)
			return errs
		},
	})
	register(&kind[*appsv1.ReplicaSet]{
		spec: replicaSetRules,
		change: func(rs, old *appsv1.ReplicaSet) field.ErrorList {
			return selectorChange(rs.Spec.Selector, old.Spec.Selector)
		},
		statusChange: func(rs, old *appsv1.ReplicaSet) field.ErrorList {
			st := &rs.Status
			return replicaCounts(field.NewPath("status"), int64(st.Replicas), int64(st.FullyLabeledReplicas), int64(st.ReadyReplicas), int64(st.AvailableReplicas), st.ObservedGeneration)
		},
	})
	register(&kind[*appsv1.StatefulSet]{
		spec:   statefulSetRules,
		change: statefulSetChange,
		statusChange: func(ss, old *appsv1.StatefulSet) field.ErrorList {
			st := &ss.Status
			p := field.NewPath("status")
			errs := replicaCounts(p, int64(st.Replicas), int64(st.Replicas), int64(st.ReadyReplicas), int64(st.AvailableReplicas), st.ObservedGeneration)
			errs = append(errs, nonNegative(int64(st.CurrentReplicas), p.Child("currentReplicas"))...)
			errs = append(errs, nonNegative(int64(st.UpdatedReplicas), p.Child("updatedReplicas"))...)
			errs = append(errs, collisionCount(st.CollisionCount, old.Status.CollisionCount)...)
			return errs
		},
	})
	register(&kind[*appsv1.DaemonSet]{
		spec: daemonSetRules,
		change: func(ds, old *appsv1.DaemonSet) field.ErrorList {
			return selectorChange(ds.Spec.Selector, old.Spec.Selector)
		},
		statusChange: func(ds, old *appsv1.DaemonSet) field.ErrorList {
			st, p := &ds.Status, field.NewPath("status")
			var errs field.ErrorList
			for _, c := range []struct {
				name string
				v    int32
			}{
				{"currentNumberScheduled", st.CurrentNumberScheduled}, {"numberMisscheduled", st.NumberMisscheduled},
				{"desiredNumberScheduled", st.DesiredNumberScheduled}, {"numberReady", st.NumberReady},
				{"updatedNumberScheduled", st.UpdatedNumberScheduled}, {"numberAvailable", st.NumberAvailable},
				{"numberUnavailable", st.NumberUnavailable},
			} {
				errs = append(errs, nonNegative(int64(c.v), p.Child(c.name))...)
			}
			errs = append(errs, nonNegative(st.ObservedGeneration, p.Child("observedGeneration"))...)
			errs = append(errs, collisionCount(st.CollisionCount, old.Status.CollisionCount)...)
			return errs
		},
	})
	register(&kind[*appsv1.ControllerRevision]{
		spec: func(cr *appsv1.ControllerRevision) field.ErrorList {
			var errs field.ErrorList
			if cr.Data.Raw == nil && cr.Data.Object == nil {
				errs = append(errs, field.Required(field.NewPath("data"), "data is mandatory"))
			}
			return append(errs, nonNegative(cr.Revision, field.NewPath("revision"))...)
		},
		change: func(cr, old *appsv1.ControllerRevision) field.ErrorList {
			return immutable(cr.Data, old.Data, field.NewPath("data"))
		},
	})
	// The scale subresource is written without a resourceVersion, so its
	// metadata is checked as on create every time.
	register(&kind[*autoscalingv1.Scale]{
		ownMeta: true,
		spec: func(s *autoscalingv1.Scale) field.ErrorList {
			errs := apimachineryvalidation.ValidateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
			return append(errs, nonNegative(int64(s.Spec.Replicas), specPath.Child("replicas"))...)
		},
	})
}

// workloadSelector checks a workload's selector: present, non-empty and
// matching the template, so the controller finds the pods it creates.
func workloadSelector(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, kindName string) field.ErrorList {
	selPath := specPath.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(selPath, "")}
	}
	errs := labelSelector(sel, selPath)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(selPath, sel, "empty selector is invalid for "+kindName))
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return append(errs, field.Invalid(selPath, sel, "invalid label selector"))
	}
	if !s.Empty() && !s.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(specPath.Child("template", "metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// workloadTemplate checks the template of a long-running workload.
func workloadTemplate(t *corev1.PodTemplateSpec, kindName string) field.ErrorList {
	tp := specPath.Child("template")
	errs := podTemplateSpec(t, tp)
	errs = append(errs, alwaysRestart(t, tp)...)
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), fmt.Sprintf("activeDeadlineSeconds in %s is not Supported", kindName)))
	}
	return errs
}

func selectorChange(sel, old *metav1.LabelSelector) field.ErrorList {
	return immutable(sel, old, specPath.Child("selector"))
}

func collisionCount(count, old *int32) field.ErrorList {
	p := field.NewPath("status", "collisionCount")
	if count == nil {
		return nil
	}
	errs := nonNegative(int64(*count), p)
	if old != nil && *count < *old {
		errs = append(errs, field.Invalid(p, *count, "cannot be decremented"))
	}
	return errs
}

func optReplicas(r *int32) field.ErrorList {
	return optNonNegative(r, specPath.Child("replicas"))
}

var deploymentStrategies = []appsv1.DeploymentStrategyType{appsv1.RecreateDeploymentStrategyType, appsv1.RollingUpdateDeploymentStrategyType}

func deploymentRules(d *appsv1.Deployment) field.ErrorList {
	spec := &d.Spec
	errs := optReplicas(spec.Replicas)
	errs = append(errs, workloadSelector(spec.Selector, &spec.Template, "deployment")...)
	errs = append(errs, workloadTemplate(&spec.Template, "ReplicaSet")...)
	sp := specPath.Child("strategy")
	errs = append(errs, enum(spec.Strategy.Type, sp.Child("type"), deploymentStrategies...)...)
	switch spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if spec.Strategy.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(sp.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if ru := spec.Strategy.RollingUpdate; ru != nil {
			errs = append(errs, surgeAndUnavailable(ru.MaxSurge, ru.MaxUnavailable, sp.Child("rollingUpdate"))...)
		}
	}
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, optNonNegative(spec.RevisionHistoryLimit, specPath.Child("revisionHistoryLimit"))...)
	if pd := spec.ProgressDeadlineSeconds; pd != nil {
		p := specPath.Child("progressDeadlineSeconds")
		errs = append(errs, nonNegative(int64(*pd), p)...)
		if *pd <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(p, *pd, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

// surgeAndUnavailable checks rolling update bounds: at most 100%
// unavailable, and some progress possible (not both zero).
func surgeAndUnavailable(surge, unavailable *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if unavailable != nil {
		errs = append(errs, intOrPercent(*unavailable, fldPath.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(*unavailable, fldPath.Child("maxUnavailable"))...)
	}
	if surge != nil {
		errs = append(errs, intOrPercent(*surge, fldPath.Child("maxSurge"))...)
	}
	if isZero(unavailable) && isZero(surge) {
		errs = append(errs, field.Invalid(fldPath.Child("maxUnavailable"), unavailable, "may not be 0 when `maxSurge` is 0"))
	}
	return errs
}

func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return true
	}
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	p, ok := percentValue(*v)
	return ok && p == 0
}

func replicaSetRules(rs *appsv1.ReplicaSet) field.ErrorList {
	spec := &rs.Spec
	errs := optReplicas(spec.Replicas)
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, workloadSelector(spec.Selector, &spec.Template, "replicaset")...)
	errs = append(errs, workloadTemplate(&spec.Template, "ReplicaSet")...)
	return errs
}

var podManagementPolicies = []appsv1.PodManagementPolicyType{appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement}
var statefulSetStrategies = []appsv1.StatefulSetUpdateStrategyType{appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType}
var pvcRetentionPolicies = []appsv1.PersistentVolumeClaimRetentionPolicyType{appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType}

func statefulSetRules(ss *appsv1.StatefulSet) field.ErrorList {
	spec := &ss.Spec
	errs := optReplicas(spec.Replicas)
	errs = append(errs, enum(spec.PodManagementPolicy, specPath.Child("podManagementPolicy"), podManagementPolicies...)...)
	up := specPath.Child("updateStrategy")
	errs = append(errs, enum(spec.UpdateStrategy.Type, up.Child("type"), statefulSetStrategies...)...)
	ru := spec.UpdateStrategy.RollingUpdate
	switch spec.UpdateStrategy.Type {
	case appsv1.OnDeleteStatefulSetStrategyType:
		if ru != nil {
			errs = append(errs, field.Invalid(up.Child("rollingUpdate"), ru, fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru != nil {
			errs = append(errs, optNonNegative(ru.Partition, up.Child("rollingUpdate", "partition"))...)
			if mu := ru.MaxUnavailable; mu != nil {
				p := up.Child("rollingUpdate", "maxUnavailable")
				errs = append(errs, intOrPercent(*mu, p)...)
				errs = append(errs, notMoreThan100Percent(*mu, p)...)
				if isZero(mu) {
					errs = append(errs, field.Invalid(p, *mu, isNotPositiveErrorMsg))
				}
			}
		}
	}
	if pol := spec.PersistentVolumeClaimRetentionPolicy; pol != nil {
		p := specPath.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, enum(pol.WhenDeleted, p.Child("whenDeleted"), pvcRetentionPolicies...)...)
		errs = append(errs, enum(pol.WhenScaled, p.Child("whenScaled"), pvcRetentionPolicies...)...)
	}
	if spec.Ordinals != nil {
		errs = append(errs, nonNegative(int64(spec.Ordinals.Start), specPath.Child("ordinals", "start"))...)
	}
	if spec.ServiceName != "" {
		errs = append(errs, dns1123Label(spec.ServiceName, specPath.Child("serviceName"))...)
	}
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, optNonNegative(spec.RevisionHistoryLimit, specPath.Child("revisionHistoryLimit"))...)
	errs = append(errs, workloadSelector(spec.Selector, &spec.Template, "statefulset")...)
	errs = append(errs, workloadTemplate(withClaimVolumes(spec), "StatefulSet")...)
	for i := range spec.VolumeClaimTemplates {
		t, p := &spec.VolumeClaimTemplates[i], specPath.Child("volumeClaimTemplates").Index(i)
		if t.Name == "" {
			errs = append(errs, field.Required(p.Child("metadata", "name"), ""))
		} else {
			errs = append(errs, dns1123Subdomain(t.Name, p.Child("metadata", "name"))...)
		}
		errs = append(errs, pvcSpec(&t.Spec, p.Child("spec"))...)
	}
	return errs
}

// withClaimVolumes returns the template as the controller completes it: each
// volume claim template becomes a volume, so containers may mount it.
func withClaimVolumes(spec *appsv1.StatefulSetSpec) *corev1.PodTemplateSpec {
	if len(spec.VolumeClaimTemplates) == 0 {
		return &spec.Template
	}
	t := spec.Template.DeepCopy()
	for _, c := range spec.VolumeClaimTemplates {
		exists := false
		for _, v := range t.Spec.Volumes {
			exists = exists || v.Name == c.Name
		}
		if !exists && c.Name != "" {
			t.Spec.Volumes = append(t.Spec.Volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
		}
	}
	return t
}

// statefulSetChange allows only the fields the controller can roll out;
// identity (selector, service, claims) is fixed for the set's lifetime.
func statefulSetChange(ss, old *appsv1.StatefulSet) field.ErrorList {
	clone := ss.Spec.DeepCopy()
	clone.Replicas = old.Spec.Replicas
	clone.Template = old.Spec.Template
	clone.UpdateStrategy = old.Spec.UpdateStrategy
	clone.MinReadySeconds = old.Spec.MinReadySeconds
	clone.Ordinals = old.Spec.Ordinals
	clone.RevisionHistoryLimit = old.Spec.RevisionHistoryLimit
	clone.PersistentVolumeClaimRetentionPolicy = old.Spec.PersistentVolumeClaimRetentionPolicy
	if !equality.Semantic.DeepEqual(*clone, old.Spec) {
		return field.ErrorList{field.Forbidden(specPath, "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")}
	}
	return nil
}

var daemonSetStrategies = []appsv1.DaemonSetUpdateStrategyType{appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType}

func daemonSetRules(ds *appsv1.DaemonSet) field.ErrorList {
	spec := &ds.Spec
	errs := workloadSelector(spec.Selector, &spec.Template, "daemonset")
	errs = append(errs, workloadTemplate(&spec.Template, "DaemonSet")...)
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, optNonNegative(spec.RevisionHistoryLimit, specPath.Child("revisionHistoryLimit"))...)
	up := specPath.Child("updateStrategy")
	errs = append(errs, enum(spec.UpdateStrategy.Type, up.Child("type"), daemonSetStrategies...)...)
	if spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if ru := spec.UpdateStrategy.RollingUpdate; ru == nil {
			errs = append(errs, field.Required(up.Child("rollingUpdate"), ""))
		} else {
			errs = append(errs, surgeAndUnavailable(ru.MaxSurge, ru.MaxUnavailable, up.Child("rollingUpdate"))...)
		}
	}
	return errs
}
