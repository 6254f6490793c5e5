package fieldselectors

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"trireme.dev/api/events"
)

// kinds lists every served hub type with its scope and own fields. A new
// group adds its kinds here (cluster-scoped ones matter: they have no
// metadata.namespace field). Certificate signing requests are listed ahead
// of their group being served.
var kinds = index([]kindFields{
	// core
	namespaced(podFields),
	cluster(nodeFields),
	namespaced(func(rc *corev1.ReplicationController) fields.Set {
		return fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
	}),
	namespaced(eventFields),
	namespaced(func(e *corev1.Event) fields.Set { return eventFields((*events.Event)(e)) }),
	namespaced(func(e *eventsv1.Event) fields.Set {
		var hub events.Event
		events.FromEventsV1(e, &hub)
		return eventFields(&hub)
	}),
	cluster(func(ns *corev1.Namespace) fields.Set { return fields.Set{"status.phase": string(ns.Status.Phase)} }),
	namespaced(func(s *corev1.Secret) fields.Set { return fields.Set{"type": string(s.Type)} }),
	namespaced(func(s *corev1.Service) fields.Set {
		return fields.Set{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)}
	}),
	namespaced[*corev1.ConfigMap](nil),
	namespaced[*corev1.ServiceAccount](nil),
	namespaced[*corev1.Endpoints](nil),
	namespaced[*corev1.LimitRange](nil),
	namespaced[*corev1.ResourceQuota](nil),
	namespaced[*corev1.PersistentVolumeClaim](nil),
	namespaced[*corev1.PodTemplate](nil),
	cluster[*corev1.PersistentVolume](nil),
	// apps
	namespaced[*appsv1.Deployment](nil),
	namespaced(func(rs *appsv1.ReplicaSet) fields.Set {
		return fields.Set{"status.replicas": strconv.Itoa(int(rs.Status.Replicas))}
	}),
	namespaced[*appsv1.StatefulSet](nil),
	namespaced[*appsv1.DaemonSet](nil),
	namespaced[*appsv1.ControllerRevision](nil),
	// batch
	namespaced(func(j *batchv1.Job) fields.Set {
		return fields.Set{"status.successful": strconv.Itoa(int(j.Status.Succeeded))}
	}),
	namespaced[*batchv1.CronJob](nil),
	// autoscaling, coordination, discovery, policy
	namespaced[*autoscalingv2.HorizontalPodAutoscaler](nil),
	namespaced[*autoscalingv1.Scale](nil),
	namespaced[*coordinationv1.Lease](nil),
	namespaced[*discoveryv1.EndpointSlice](nil),
	namespaced[*policyv1.PodDisruptionBudget](nil),
	// networking
	namespaced[*networkingv1.Ingress](nil),
	namespaced[*networkingv1.NetworkPolicy](nil),
	cluster[*networkingv1.IngressClass](nil),
	cluster[*networkingv1.ServiceCIDR](nil),
	cluster[*networkingv1.IPAddress](nil),
	// scheduling, node, storage, flowcontrol
	cluster[*schedulingv1.PriorityClass](nil),
	cluster[*nodev1.RuntimeClass](nil),
	cluster[*storagev1.StorageClass](nil),
	cluster[*storagev1.CSIDriver](nil),
	cluster[*storagev1.CSINode](nil),
	cluster[*storagev1.VolumeAttachment](nil),
	cluster[*flowcontrolv1.FlowSchema](nil),
	cluster[*flowcontrolv1.PriorityLevelConfiguration](nil),
	// resource
	cluster[*resourcev1.DeviceClass](nil),
	namespaced[*resourcev1.ResourceClaim](nil),
	namespaced[*resourcev1.ResourceClaimTemplate](nil),
	cluster(func(s *resourcev1.ResourceSlice) fields.Set {
		nodeName := ""
		if s.Spec.NodeName != nil {
			nodeName = *s.Spec.NodeName
		}
		return fields.Set{resourcev1.ResourceSliceSelectorNodeName: nodeName, resourcev1.ResourceSliceSelectorDriver: s.Spec.Driver}
	}),
	// certificates
	cluster(func(csr *certificatesv1.CertificateSigningRequest) fields.Set {
		return fields.Set{"spec.signerName": csr.Spec.SignerName}
	}),
	cluster(func(ctb *certificatesv1.ClusterTrustBundle) fields.Set {
		return fields.Set{"spec.signerName": ctb.Spec.SignerName}
	}),
	namespaced(func(r *certificatesv1.PodCertificateRequest) fields.Set {
		return fields.Set{"spec.signerName": r.Spec.SignerName, "spec.podName": r.Spec.PodName, "spec.nodeName": string(r.Spec.NodeName)}
	}),
})

// labels holds the field-label conversions of kinds with their own fields,
// by group and kind; every other kind gets upstream's default conversion.
// They differ from Fields where upstream's do: pods accept the old
// spec.host and a status.podIPs that matches nothing; events.k8s.io Events
// use their own names for the core fields; apps/v1 ReplicaSets have
// status.replicas in their fields but no conversion admitting it.
var labels = map[schema.GroupKind]labelSpec{
	{Kind: "Pod"}: {
		accepted: merge(same("metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
			"spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
			"status.podIPs", "status.nominatedNodeName"),
			map[string]string{"spec.host": "spec.nodeName"}),
		unsupported: notSupported,
	},
	{Kind: "Node"}:                  {accepted: same("metadata.name", "spec.unschedulable"), unsupported: notSupported},
	{Kind: "ReplicationController"}: {accepted: same("metadata.name", "metadata.namespace", "status.replicas"), unsupported: notSupported},
	{Kind: "Event"}: {
		accepted: same("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
			"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
			"reason", "reportingComponent", "source", "type", "metadata.namespace", "metadata.name"),
		unsupported: notSupported,
	},
	{Kind: "Namespace"}: {accepted: same("status.phase", "metadata.name"), unsupported: notSupported},
	{Kind: "Secret"}:    {accepted: same("type", "metadata.namespace", "metadata.name"), unsupported: notSupported},
	{Kind: "Service"}:   {accepted: same("metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"), unsupported: notSupported},
	{Group: eventsv1.GroupName, Kind: "Event"}: {
		accepted: map[string]string{
			"reason":                    "reason",
			"regarding.kind":            "involvedObject.kind",
			"regarding.namespace":       "involvedObject.namespace",
			"regarding.name":            "involvedObject.name",
			"regarding.uid":             "involvedObject.uid",
			"regarding.apiVersion":      "involvedObject.apiVersion",
			"regarding.resourceVersion": "involvedObject.resourceVersion",
			"regarding.fieldPath":       "involvedObject.fieldPath",
			"reportingController":       "reportingComponent",
			"source":                    "source",
			"type":                      "type",
			"metadata.namespace":        "metadata.namespace",
			"metadata.name":             "metadata.name",
		},
		unsupported: notSupported,
	},
	{Group: batchv1.GroupName, Kind: "Job"}: {
		accepted: same("metadata.name", "metadata.namespace", "status.successful"),
		unsupported: func(_ schema.GroupVersionKind, label string) error {
			return fmt.Errorf("field label %q not supported for batchv1.Job", label)
		},
	},
	{Group: resourcev1.GroupName, Kind: "ResourceSlice"}: {
		accepted:    same("metadata.name", resourcev1.ResourceSliceSelectorNodeName, resourcev1.ResourceSliceSelectorDriver),
		unsupported: notSupportedFor,
	},
	{Group: certificatesv1.GroupName, Kind: "CertificateSigningRequest"}: {
		accepted:    same("metadata.name", "spec.signerName"),
		unsupported: notSupported,
	},
	{Group: certificatesv1.GroupName, Kind: "ClusterTrustBundle"}: {
		accepted:    same("metadata.name", "spec.signerName"),
		unsupported: notSupported,
	},
	// Signers watch their requests, kubelets those of their node. Upstream
	// omits metadata.namespace here alone of all namespaced kinds; we accept
	// it, so generic clients that select by namespace work on these too.
	{Group: certificatesv1.GroupName, Kind: "PodCertificateRequest"}: {
		accepted:    same("metadata.name", "metadata.namespace", "spec.signerName", "spec.podName", "spec.nodeName"),
		unsupported: notSupported,
	},
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func podFields(pod *corev1.Pod) fields.Set {
	// Like upstream's v1 conversion, podIP wins over podIPs when both are set.
	podIP := pod.Status.PodIP
	if podIP == "" && len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	return fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             podIP,
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
}

func nodeFields(node *corev1.Node) fields.Set {
	return fields.Set{"spec.unschedulable": strconv.FormatBool(node.Spec.Unschedulable)}
}

// eventFields uses the core/v1 names for both API groups; source falls back
// to the reporting controller of events.k8s.io events.
func eventFields(e *events.Event) fields.Set {
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}
