package printers

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The descriptions below come from the older API versions upstream's
// printers still quote, so that `kubectl get -o json` of a Table matches.

var deploymentColumns = columns(
	nameCol(),
	col("Ready", typeString, "Number of the pod with ready state"),
	col("Up-to-date", typeString, extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]),
	col("Available", typeString, extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]),
	ageCol(),
	wide("Containers", typeString, containersDoc),
	wide("Images", typeString, imagesDoc),
	wide("Selector", typeString, extensionsv1beta1.DeploymentSpec{}.SwaggerDoc()["selector"]),
)

func deploymentCells(d *appsv1.Deployment, now time.Time) []any {
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, deref(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d, now), names, images, selector}
}

var replicaSetColumns = columns(
	nameCol(),
	col("Desired", typeInteger, extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]),
	col("Current", typeInteger, extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]),
	col("Ready", typeInteger, extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]),
	ageCol(),
	wide("Containers", typeString, containersDoc),
	wide("Images", typeString, imagesDoc),
	wide("Selector", typeString, extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["selector"]),
)

func replicaSetCells(rs *appsv1.ReplicaSet, now time.Time) []any {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []any{rs.Name, int64(deref(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age(rs, now),
		names, images, metav1.FormatLabelSelector(rs.Spec.Selector)}
}

var statefulSetColumns = columns(
	nameCol(),
	col("Ready", typeString, "Number of the pod with ready state"),
	ageCol(),
	wide("Containers", typeString, containersDoc),
	wide("Images", typeString, imagesDoc),
)

func statefulSetCells(s *appsv1.StatefulSet, now time.Time) []any {
	names, images := containerCells(s.Spec.Template.Spec.Containers)
	return []any{s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, deref(s.Spec.Replicas)), age(s, now), names, images}
}

var daemonSetColumns = columns(
	nameCol(),
	col("Desired", typeInteger, extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]),
	col("Current", typeInteger, extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]),
	col("Ready", typeInteger, extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]),
	col("Up-to-date", typeInteger, extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]),
	col("Available", typeInteger, extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]),
	col("Node Selector", typeString, corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
	ageCol(),
	wide("Containers", typeString, containersDoc),
	wide("Images", typeString, imagesDoc),
	wide("Selector", typeString, extensionsv1beta1.DaemonSetSpec{}.SwaggerDoc()["selector"]),
)

func daemonSetCells(ds *appsv1.DaemonSet, now time.Time) []any {
	st := ds.Status
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	return []any{ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		age(ds, now), names, images, metav1.FormatLabelSelector(ds.Spec.Selector)}
}

var controllerRevisionColumns = columns(
	nameCol(),
	col("Controller", typeString, "Controller of the object"),
	col("Revision", typeString, appsv1beta1.ControllerRevision{}.SwaggerDoc()["revision"]),
	ageCol(),
)

// controllerRevisionCells names the owning controller as kind.group/name.
// An owner reference with an unparsable apiVersion fails the table, as
// upstream's does.
func controllerRevisionCells(cr *appsv1.ControllerRevision, now time.Time) ([]any, error) {
	controller := none
	if ref := metav1.GetControllerOf(cr); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("controller revision %s: %w", cr.Name, err)
		}
		controller = qualifiedName(gv.WithKind(ref.Kind).GroupKind(), ref.Name)
	}
	return []any{cr.Name, controller, cr.Revision, age(cr, now)}, nil
}
