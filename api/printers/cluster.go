package printers

import (
	"fmt"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

var priorityClassColumns = columns(
	nameCol(),
	col("Value", typeInteger, schedulingv1.PriorityClass{}.SwaggerDoc()["value"]),
	col("Global-Default", typeBoolean, schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]),
	ageCol(),
	col("PreemptionPolicy", typeString, schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]),
)

func priorityClassCells(pc *schedulingv1.PriorityClass, now time.Time) []any {
	return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc, now), string(deref(pc.PreemptionPolicy))}
}

var runtimeClassColumns = columns(
	nameCol(),
	// Upstream looks the description up in the wrong map, so it is empty.
	col("Handler", typeString, objectMetaDoc["handler"]),
	ageCol(),
)

func runtimeClassCells(rc *nodev1.RuntimeClass, now time.Time) []any {
	return []any{rc.Name, rc.Handler, age(rc, now)}
}

var leaseColumns = columns(
	nameCol(),
	col("Holder", typeString, coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]),
	ageCol(),
)

func leaseCells(l *coordinationv1.Lease, now time.Time) []any {
	return []any{l.Name, deref(l.Spec.HolderIdentity), age(l, now)}
}

var podDisruptionBudgetColumns = columns(
	nameCol(),
	col("Min Available", typeString, "The minimum number of pods that must be available."),
	col("Max Unavailable", typeString, "The maximum number of pods that may be unavailable."),
	col("Allowed Disruptions", typeInteger, "Calculated number of pods that may be disrupted at this time."),
	ageCol(),
)

func podDisruptionBudgetCells(pdb *policyv1.PodDisruptionBudget, now time.Time) []any {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb, now)}
}

// horizontalPodAutoscalerColumns quote autoscaling/v2: the v2beta1 texts
// upstream uses are no longer published.
var horizontalPodAutoscalerColumns = columns(
	nameCol(),
	col("Reference", typeString, autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]),
	col("Targets", typeString, autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]),
	col("MinPods", typeString, autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]),
	col("MaxPods", typeString, autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]),
	col("Replicas", typeString, autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]),
	ageCol(),
)

func horizontalPodAutoscalerCells(hpa *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []any {
	minPods := unset
	if hpa.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *hpa.Spec.MinReplicas)
	}
	ref := hpa.Spec.ScaleTargetRef
	return []any{hpa.Name, ref.Kind + "/" + ref.Name, hpaTargets(hpa.Spec.Metrics, hpa.Status.CurrentMetrics), minPods,
		int64(hpa.Spec.MaxReplicas), int64(hpa.Status.CurrentReplicas), age(hpa, now)}
}

// hpaTargets shows, for the first two metrics, the current value against
// the target, and how many metrics are left out. The status of a metric is
// the entry at the same index. Quantities print "<nil>" where upstream
// prints a pointer it did not check.
func hpaTargets(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return none
	}
	const limit = 2
	list := make([]string, 0, len(specs))
	for i, spec := range specs {
		var status autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = statuses[i]
		}
		list = append(list, hpaTarget(spec, status))
	}
	if len(list) > limit {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:limit], ", "), len(list)-limit)
	}
	return strings.Join(list, ", ")
}

func hpaTarget(spec autoscalingv2.MetricSpec, status autoscalingv2.MetricStatus) string {
	const unknownType = "<unknown type>"
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			return unknownType
		}
		return valueTarget(spec.External.Target, status.External != nil, func() autoscalingv2.MetricValueStatus { return status.External.Current })
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			return unknownType
		}
		return valueTarget(spec.Object.Target, status.Object != nil, func() autoscalingv2.MetricValueStatus { return status.Object.Current })
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			return unknownType
		}
		current := unknown
		if status.Pods != nil {
			current = status.Pods.Current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String())
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			return unknownType
		}
		var current *autoscalingv2.MetricValueStatus
		if status.Resource != nil {
			current = &status.Resource.Current
		}
		return resourceTarget(spec.Resource.Name.String(), spec.Resource.Target, current)
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			return unknownType
		}
		var current *autoscalingv2.MetricValueStatus
		if status.ContainerResource != nil {
			current = &status.ContainerResource.Current
		}
		return resourceTarget(spec.ContainerResource.Name.String(), spec.ContainerResource.Target, current)
	}
	return unknownType
}

// valueTarget formats an object or external metric: an average value
// target is marked "(avg)", otherwise the plain value is compared.
func valueTarget(target autoscalingv2.MetricTarget, hasStatus bool, current func() autoscalingv2.MetricValueStatus) string {
	if target.AverageValue != nil {
		cur := unknown
		if hasStatus && current().AverageValue != nil {
			cur = current().AverageValue.String()
		}
		return fmt.Sprintf("%s/%s (avg)", cur, target.AverageValue.String())
	}
	cur := unknown
	if hasStatus {
		cur = current().Value.String()
	}
	return fmt.Sprintf("%s/%s", cur, target.Value.String())
}

// resourceTarget formats a (container) resource metric, by average value
// or by utilization percentage.
func resourceTarget(name string, target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	if target.AverageValue != nil {
		cur := unknown
		if current != nil {
			cur = current.AverageValue.String()
		}
		return fmt.Sprintf("%s: %s/%s", name, cur, target.AverageValue.String())
	}
	cur := unknown
	if current != nil && current.AverageUtilization != nil {
		cur = fmt.Sprintf("%d%%", *current.AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, cur, want)
}

// scaleColumns are those of the scale subresource; upstream does not mark
// the name column as a name there.
var scaleColumns = columns(
	col("Name", typeString, objectMetaDoc["name"]),
	col("Desired", typeInteger, autoscalingv1.ScaleSpec{}.SwaggerDoc()["replicas"]),
	col("Available", typeInteger, autoscalingv1.ScaleStatus{}.SwaggerDoc()["replicas"]),
	ageCol(),
)

func scaleCells(s *autoscalingv1.Scale, now time.Time) []any {
	return []any{s.Name, int64(s.Spec.Replicas), int64(s.Status.Replicas), age(s, now)}
}

var flowSchemaColumns = columns(
	nameCol(),
	col("PriorityLevel", typeString, flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
	col("MatchingPrecedence", typeString, flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]),
	col("DistinguisherMethod", typeString, flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]),
	ageCol(),
	col("MissingPL", typeString, "references a broken or non-existent PriorityLevelConfiguration"),
)

func flowSchemaCells(fs *flowcontrolv1.FlowSchema, now time.Time) []any {
	method := none
	if fs.Spec.DistinguisherMethod != nil {
		method = string(fs.Spec.DistinguisherMethod.Type)
	}
	dangling := "?"
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			dangling = string(c.Status)
			break
		}
	}
	return []any{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method, age(fs, now), dangling}
}

// flowSchemaBefore is the order the API server evaluates flow schemas in:
// lower matching precedence first, then by name.
func flowSchemaBefore(a, b *flowcontrolv1.FlowSchema) bool {
	if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
		return a.Spec.MatchingPrecedence < b.Spec.MatchingPrecedence
	}
	return a.Name < b.Name
}

var priorityLevelConfigurationColumns = columns(
	nameCol(),
	col("Type", typeString, flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
	col("NominalConcurrencyShares", typeString, flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]),
	col("Queues", typeString, flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]),
	col("HandSize", typeString, flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]),
	col("QueueLengthLimit", typeString, flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]),
	ageCol(),
)

func priorityLevelConfigurationCells(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) []any {
	var shares, queues, handSize, queueLength any = none, none, none, none
	if l := pl.Spec.Limited; l != nil {
		// Defaulting always sets the shares of a limited level.
		shares = deref(l.NominalConcurrencyShares)
		if q := l.LimitResponse.Queuing; q != nil {
			queues, handSize, queueLength = q.Queues, q.HandSize, q.QueueLengthLimit
		}
	}
	return []any{pl.Name, string(pl.Spec.Type), shares, queues, handSize, queueLength, age(pl, now)}
}
