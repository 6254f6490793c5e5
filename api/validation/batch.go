package validation

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	// Time zones must resolve the same on every host, including static
	// binaries without a zoneinfo directory.
	_ "time/tzdata"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*batchv1.Job]{
		spec: func(j *batchv1.Job) field.ErrorList {
			return jobSpec(&j.Spec, specPath, false)
		},
		change:       jobChange,
		statusChange: func(j, old *batchv1.Job) field.ErrorList { return jobStatus(&j.Status) },
	})
	register(&kind[*batchv1.CronJob]{
		spec:       func(cj *batchv1.CronJob) field.ErrorList { return cronJobSpec(&cj.Spec) },
		createOnly: cronJobCreate,
		change:     func(cj, old *batchv1.CronJob) field.ErrorList { return cronJobScheduleChange(&cj.Spec, &old.Spec) },
	})
}

// Hard limits for indexed jobs, which track every index in status.
const (
	completionsHardLimit        = 100000
	parallelismHardLimit        = 100000
	maxPodFailurePolicyRules    = 20
	maxPodFailurePolicyValues   = 255
	maxPodFailurePolicyPatterns = 20
	maxSuccessPolicyRules       = 20
	maxFailedIndexesHardLimit   = 100000
	maxManagedByLength          = 63
	// cronJobNameMaxLength leaves room for the 11-character suffix of the
	// Jobs a CronJob creates, within the 63 characters of a label value.
	cronJobNameMaxLength = 52
)

var completionModes = []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}
var podReplacementPolicies = []batchv1.PodReplacementPolicy{batchv1.TerminatingOrFailed, batchv1.Failed}

// jobSpec checks a Job's spec; CronJob templates may leave the selector to
// be generated.
func jobSpec(spec *batchv1.JobSpec, fldPath *field.Path, inTemplate bool) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, optNonNegative(spec.Parallelism, fldPath.Child("parallelism"))...)
	errs = append(errs, optNonNegative(spec.Completions, fldPath.Child("completions"))...)
	errs = append(errs, optNonNegative(spec.ActiveDeadlineSeconds, fldPath.Child("activeDeadlineSeconds"))...)
	errs = append(errs, optNonNegative(spec.BackoffLimit, fldPath.Child("backoffLimit"))...)
	errs = append(errs, optNonNegative(spec.TTLSecondsAfterFinished, fldPath.Child("ttlSecondsAfterFinished"))...)
	indexed := spec.CompletionMode != nil && *spec.CompletionMode == batchv1.IndexedCompletion
	if spec.CompletionMode != nil {
		errs = append(errs, enum(*spec.CompletionMode, fldPath.Child("completionMode"), completionModes...)...)
	}
	if indexed {
		if spec.Completions == nil {
			errs = append(errs, field.Required(fldPath.Child("completions"), "when completion mode is Indexed"))
		}
		if spec.Parallelism != nil && *spec.Parallelism > parallelismHardLimit {
			errs = append(errs, field.Invalid(fldPath.Child("parallelism"), *spec.Parallelism, fmt.Sprintf("must be less than or equal to %d when completion mode is Indexed", parallelismHardLimit)))
		}
	}
	if spec.BackoffLimitPerIndex != nil {
		p := fldPath.Child("backoffLimitPerIndex")
		errs = append(errs, nonNegative(int64(*spec.BackoffLimitPerIndex), p)...)
		if !indexed {
			errs = append(errs, field.Invalid(p, *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.Completions != nil && *spec.Completions > completionsHardLimit {
			errs = append(errs, field.Invalid(fldPath.Child("completions"), *spec.Completions, fmt.Sprintf("must be less than or equal to %d when backoffLimitPerIndex is specified", completionsHardLimit)))
		}
	}
	if spec.MaxFailedIndexes != nil {
		p := fldPath.Child("maxFailedIndexes")
		errs = append(errs, nonNegative(int64(*spec.MaxFailedIndexes), p)...)
		if spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(fldPath.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
		if *spec.MaxFailedIndexes > maxFailedIndexesHardLimit {
			errs = append(errs, field.Invalid(p, *spec.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesHardLimit)))
		}
		if spec.Completions != nil && *spec.MaxFailedIndexes > *spec.Completions {
			errs = append(errs, field.Invalid(p, *spec.MaxFailedIndexes, "must be less than or equal to completions"))
		}
	}
	if spec.PodReplacementPolicy != nil {
		p := fldPath.Child("podReplacementPolicy")
		errs = append(errs, enum(*spec.PodReplacementPolicy, p, podReplacementPolicies...)...)
		if spec.PodFailurePolicy != nil && *spec.PodReplacementPolicy != batchv1.Failed {
			errs = append(errs, field.NotSupported(p, *spec.PodReplacementPolicy, []string{string(batchv1.Failed)}))
		}
	}
	if spec.ManagedBy != nil {
		p := fldPath.Child("managedBy")
		if len(*spec.ManagedBy) > maxManagedByLength {
			errs = append(errs, field.TooLong(p, "", maxManagedByLength))
		} else {
			errs = append(errs, each(p, *spec.ManagedBy, isDomainPrefixedPath(*spec.ManagedBy))...)
		}
	}
	errs = append(errs, successPolicy(spec, fldPath)...)

	selPath := fldPath.Child("selector")
	if spec.Selector == nil {
		if !inTemplate {
			errs = append(errs, field.Required(selPath, ""))
		}
	} else {
		errs = append(errs, labelSelector(spec.Selector, selPath)...)
		if s, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !s.Matches(labels.Set(spec.Template.Labels)) {
			errs = append(errs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
		}
	}
	tp := fldPath.Child("template")
	errs = append(errs, podTemplateSpec(&spec.Template, tp)...)
	if rp := spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), rp, []string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}))
	}
	errs = append(errs, podFailurePolicy(spec, fldPath)...)
	return errs
}

// isDomainPrefixedPath checks a controller name such as
// "kueue.x-k8s.io/multikueue".
func isDomainPrefixedPath(v string) []string {
	domain, path, ok := strings.Cut(v, "/")
	if !ok || domain == "" || path == "" {
		return []string{"must be a domain-prefixed path (such as \"acme.io/foo\")"}
	}
	return dnsSubdomainMsgs(domain)
}

var podFailureActions = []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionCount}
var exitCodeOperators = []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
var conditionStatuses = []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}

// podFailurePolicy checks spec.podFailurePolicy; specPath is the job spec.
func podFailurePolicy(spec *batchv1.JobSpec, specPath *field.Path) field.ErrorList {
	pfp := spec.PodFailurePolicy
	if pfp == nil {
		return nil
	}
	fldPath := specPath.Child("podFailurePolicy")
	var errs field.ErrorList
	if rp := spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyNever {
		errs = append(errs, field.NotSupported(specPath.Child("template", "spec", "restartPolicy"), rp, []string{"Never"}))
	}
	rulesPath := fldPath.Child("rules")
	if len(pfp.Rules) > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rulesPath, len(pfp.Rules), maxPodFailurePolicyRules))
	}
	containers := sets.New[string]()
	for _, c := range spec.Template.Spec.Containers {
		containers.Insert(c.Name)
	}
	for _, c := range spec.Template.Spec.InitContainers {
		containers.Insert(c.Name)
	}
	for i, r := range pfp.Rules {
		p := rulesPath.Index(i)
		errs = append(errs, enum(r.Action, p.Child("action"), podFailureActions...)...)
		if r.Action == batchv1.PodFailurePolicyActionFailIndex && spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(p.Child("action"), r.Action, "requires the backoffLimitPerIndex to be set"))
		}
		switch {
		case r.OnExitCodes != nil && len(r.OnPodConditions) > 0:
			errs = append(errs, field.Invalid(p, "", "specifying both OnExitCodes and OnPodConditions is not supported"))
		case r.OnExitCodes == nil && len(r.OnPodConditions) == 0:
			errs = append(errs, field.Invalid(p, "", "specifying one of OnExitCodes and OnPodConditions is required"))
		}
		if ec := r.OnExitCodes; ec != nil {
			ep := p.Child("onExitCodes")
			if ec.ContainerName != nil && !containers.Has(*ec.ContainerName) {
				errs = append(errs, field.Invalid(ep.Child("containerName"), *ec.ContainerName, "must be one of the container or initContainer names in the pod template"))
			}
			errs = append(errs, enum(ec.Operator, ep.Child("operator"), exitCodeOperators...)...)
			vp := ep.Child("values")
			switch {
			case len(ec.Values) == 0:
				errs = append(errs, field.Invalid(vp, ec.Values, "at least one value is required"))
			case len(ec.Values) > maxPodFailurePolicyValues:
				errs = append(errs, field.TooMany(vp, len(ec.Values), maxPodFailurePolicyValues))
			}
			for j, v := range ec.Values {
				if ec.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
					errs = append(errs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
				}
				if j > 0 && ec.Values[j-1] == v {
					errs = append(errs, field.Duplicate(vp.Index(j), v))
				} else if j > 0 && ec.Values[j-1] > v {
					errs = append(errs, field.Invalid(vp.Index(j), v, "must be ordered"))
				}
			}
		}
		cp := p.Child("onPodConditions")
		if len(r.OnPodConditions) > maxPodFailurePolicyPatterns {
			errs = append(errs, field.TooMany(cp, len(r.OnPodConditions), maxPodFailurePolicyPatterns))
		}
		for j, c := range r.OnPodConditions {
			errs = append(errs, qualifiedName(string(c.Type), cp.Index(j).Child("type"))...)
			errs = append(errs, enum(c.Status, cp.Index(j).Child("status"), conditionStatuses...)...)
		}
	}
	return errs
}

// successPolicy checks spec.successPolicy; specPath is the job spec.
func successPolicy(spec *batchv1.JobSpec, specPath *field.Path) field.ErrorList {
	sp := spec.SuccessPolicy
	if sp == nil {
		return nil
	}
	fldPath := specPath.Child("successPolicy")
	var errs field.ErrorList
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		errs = append(errs, field.Invalid(specPath.Child("completionMode"), spec.CompletionMode, "requires indexed completion mode"))
	}
	rp := fldPath.Child("rules")
	switch {
	case len(sp.Rules) == 0:
		errs = append(errs, field.Required(rp, "at least one rules must be specified when the successPolicy is specified"))
	case len(sp.Rules) > maxSuccessPolicyRules:
		errs = append(errs, field.TooMany(rp, len(sp.Rules), maxSuccessPolicyRules))
	}
	for i, r := range sp.Rules {
		p := rp.Index(i)
		if r.SucceededCount == nil && r.SucceededIndexes == nil {
			errs = append(errs, field.Required(p, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		if r.SucceededCount != nil {
			errs = append(errs, nonNegative(int64(*r.SucceededCount), p.Child("succeededCount"))...)
			if spec.Completions != nil && *r.SucceededCount > *spec.Completions {
				errs = append(errs, field.Invalid(p.Child("succeededCount"), *r.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", *spec.Completions)))
			}
		}
		if r.SucceededIndexes != nil {
			if err := indexList(*r.SucceededIndexes); err != nil {
				errs = append(errs, field.Invalid(p.Child("succeededIndexes"), *r.SucceededIndexes, err.Error()))
			}
		}
	}
	return errs
}

// indexList checks an interval list such as "1,3-5,7".
func indexList(s string) error {
	if s == "" {
		return nil
	}
	last := -1
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		var a, b int
		if _, err := fmt.Sscanf(lo, "%d", &a); err != nil || fmt.Sprint(a) != lo {
			return fmt.Errorf("error parsing succeededIndexes: cannot convert string to integer for index: %q", lo)
		}
		b = a
		if isRange {
			if _, err := fmt.Sscanf(hi, "%d", &b); err != nil || fmt.Sprint(b) != hi {
				return fmt.Errorf("error parsing succeededIndexes: cannot convert string to integer for index: %q", hi)
			}
		}
		if a < 0 || a > b || a <= last {
			return fmt.Errorf("error parsing succeededIndexes: the intervals must be ordered and not overlap")
		}
		last = b
	}
	return nil
}

// jobChange fixes what the controller relies on after creation. A job
// that is suspended and never started may still have its pods' placement
// adjusted, as queueing controllers do before admitting it.
func jobChange(j, old *batchv1.Job) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, immutable(j.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
	oldTemplate := old.Spec.Template.DeepCopy()
	if old.Spec.Suspend != nil && *old.Spec.Suspend && old.Status.StartTime == nil {
		t := &j.Spec.Template
		oldTemplate.Labels, oldTemplate.Annotations = t.Labels, t.Annotations
		oldTemplate.Spec.NodeSelector, oldTemplate.Spec.Tolerations = t.Spec.NodeSelector, t.Spec.Tolerations
		oldTemplate.Spec.Affinity, oldTemplate.Spec.SchedulingGates = t.Spec.Affinity, t.Spec.SchedulingGates
		for i := range oldTemplate.Spec.Containers {
			if i < len(t.Spec.Containers) {
				oldTemplate.Spec.Containers[i].Resources = t.Spec.Containers[i].Resources
			}
		}
	}
	if !equality.Semantic.DeepEqual(j.Spec.Template, *oldTemplate) {
		errs = append(errs, field.Invalid(specPath.Child("template"), j.Spec.Template, immutableErrorMsg))
	}
	// Indexed jobs may scale elastically: completions follows parallelism.
	elastic := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion &&
		j.Spec.Completions != nil && j.Spec.Parallelism != nil && *j.Spec.Completions == *j.Spec.Parallelism &&
		old.Spec.Completions != nil && old.Spec.Parallelism != nil && *old.Spec.Completions == *old.Spec.Parallelism
	if !elastic {
		errs = append(errs, immutable(j.Spec.Completions, old.Spec.Completions, specPath.Child("completions"))...)
	}
	errs = append(errs, immutable(j.Spec.CompletionMode, old.Spec.CompletionMode, specPath.Child("completionMode"))...)
	errs = append(errs, immutable(j.Spec.PodFailurePolicy, old.Spec.PodFailurePolicy, specPath.Child("podFailurePolicy"))...)
	errs = append(errs, immutable(j.Spec.BackoffLimitPerIndex, old.Spec.BackoffLimitPerIndex, specPath.Child("backoffLimitPerIndex"))...)
	errs = append(errs, immutable(j.Spec.SuccessPolicy, old.Spec.SuccessPolicy, specPath.Child("successPolicy"))...)
	errs = append(errs, immutable(j.Spec.ManagedBy, old.Spec.ManagedBy, specPath.Child("managedBy"))...)
	return errs
}

func jobStatus(st *batchv1.JobStatus) field.ErrorList {
	p := field.NewPath("status")
	var errs field.ErrorList
	errs = append(errs, nonNegative(int64(st.Active), p.Child("active"))...)
	errs = append(errs, nonNegative(int64(st.Succeeded), p.Child("succeeded"))...)
	errs = append(errs, nonNegative(int64(st.Failed), p.Child("failed"))...)
	errs = append(errs, optNonNegative(st.Ready, p.Child("ready"))...)
	errs = append(errs, optNonNegative(st.Terminating, p.Child("terminating"))...)
	if st.CompletedIndexes != "" {
		if err := indexList(st.CompletedIndexes); err != nil {
			errs = append(errs, field.Invalid(p.Child("completedIndexes"), st.CompletedIndexes, "must be a list of ordered, non-overlapping intervals"))
		}
	}
	return errs
}

var concurrencyPolicies = []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}

// validTimeZoneCharacters bounds each element of a zone name, as the zoneinfo
// database does.
var validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// cronJobSpec checks a CronJob's spec; the TZ= rule is in scheduleTZ.
func cronJobSpec(spec *batchv1.CronJobSpec) field.ErrorList {
	var errs field.ErrorList
	sp := specPath.Child("schedule")
	if spec.Schedule == "" {
		errs = append(errs, field.Required(sp, ""))
	} else if err := parseCronSchedule(spec.Schedule); err != nil {
		errs = append(errs, field.Invalid(sp, spec.Schedule, err.Error()))
	}
	errs = append(errs, timeZone(spec.TimeZone, specPath.Child("timeZone"))...)
	errs = append(errs, optNonNegative(spec.StartingDeadlineSeconds, specPath.Child("startingDeadlineSeconds"))...)
	errs = append(errs, enum(spec.ConcurrencyPolicy, specPath.Child("concurrencyPolicy"), concurrencyPolicies...)...)
	errs = append(errs, optNonNegative(spec.SuccessfulJobsHistoryLimit, specPath.Child("successfulJobsHistoryLimit"))...)
	errs = append(errs, optNonNegative(spec.FailedJobsHistoryLimit, specPath.Child("failedJobsHistoryLimit"))...)
	jt := specPath.Child("jobTemplate")
	errs = append(errs, metav1validation.ValidateLabels(spec.JobTemplate.Labels, jt.Child("metadata", "labels"))...)
	errs = append(errs, annotations(spec.JobTemplate.Annotations, jt.Child("metadata", "annotations"))...)
	errs = append(errs, jobSpec(&spec.JobTemplate.Spec, jt.Child("spec"), true)...)
	return errs
}

func cronJobCreate(cj *batchv1.CronJob) field.ErrorList {
	var errs field.ErrorList
	if len(cj.Name) > cronJobNameMaxLength {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), cj.Name, fmt.Sprintf("must be no more than %d characters", cronJobNameMaxLength)))
	}
	return append(errs, scheduleTZ(cj.Spec.Schedule, false, cj.Spec.TimeZone)...)
}

// cronJobScheduleChange re-checks the TZ rule only when the schedule
// changes, so CronJobs stored before the rule keep working.
func cronJobScheduleChange(spec, old *batchv1.CronJobSpec) field.ErrorList {
	if spec.Schedule == old.Schedule {
		return nil
	}
	return scheduleTZ(spec.Schedule, strings.Contains(old.Schedule, "TZ"), spec.TimeZone)
}

func scheduleTZ(schedule string, allowTZ bool, tz *string) field.ErrorList {
	p := specPath.Child("schedule")
	switch {
	case allowTZ && strings.Contains(schedule, "TZ") && tz != nil:
		return field.ErrorList{field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule")}
	case !allowTZ && strings.Contains(schedule, "TZ"):
		return field.ErrorList{field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")}
	}
	return nil
}

func timeZone(tz *string, fldPath *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(fldPath, *tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(fldPath, *tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	if strings.EqualFold(*tz, "Local") {
		return field.ErrorList{field.Invalid(fldPath, *tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")}
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		return field.ErrorList{field.Invalid(fldPath, *tz, err.Error())}
	}
	return nil
}
