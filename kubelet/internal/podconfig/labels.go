package podconfig

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Labels and annotations on CRI objects, spelt as upstream's kubelet spells
// them so that crictl and tools written for upstream read them. The
// exported ones are those the kubelet reads back from the runtime.
const (
	labelPodName      = "io.kubernetes.pod.name"
	labelPodNamespace = "io.kubernetes.pod.namespace"
	// LabelPodUID is the UID of the pod a sandbox or container belongs to.
	LabelPodUID = "io.kubernetes.pod.uid"
	// LabelContainerName is a container's name in its pod's spec.
	LabelContainerName = "io.kubernetes.container.name"
	// LabelContainerType is ContainerTypeInit, ContainerTypeRegular or
	// ContainerTypeEphemeral.
	LabelContainerType = "io.kubernetes.container.type"

	annotationRestartCount = "io.kubernetes.container.restartCount"
	// AnnotationTerminationMessagePath is where in the container its
	// termination message is written.
	AnnotationTerminationMessagePath = "io.kubernetes.container.terminationMessagePath"
	// AnnotationTerminationMessagePolicy is the container's
	// terminationMessagePolicy.
	AnnotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
	annotationGracePeriod              = "io.kubernetes.pod.terminationGracePeriod"
	// AnnotationContainerImage is the image the container's spec named.
	AnnotationContainerImage = "io.kubernetes.container.image"

	// ContainerTypeInit labels init containers, sidecars included.
	ContainerTypeInit = "INIT"
	// ContainerTypeRegular labels app containers.
	ContainerTypeRegular = "REGULAR"
	// ContainerTypeEphemeral labels ephemeral containers (kubectl debug).
	ContainerTypeEphemeral = "EPHEMERAL"
)

func sandboxLabels(pod *corev1.Pod) map[string]string {
	l := map[string]string{}
	for k, v := range pod.Labels {
		l[k] = v
	}
	l[labelPodName] = pod.Name
	l[labelPodNamespace] = pod.Namespace
	l[LabelPodUID] = string(pod.UID)
	return l
}

func containerLabels(pod *corev1.Pod, name, ctype string) map[string]string {
	return map[string]string{
		labelPodName:       pod.Name,
		labelPodNamespace:  pod.Namespace,
		LabelPodUID:        string(pod.UID),
		LabelContainerName: name,
		LabelContainerType: ctype,
	}
}

// PodUID returns the pod UID a CRI object's labels name.
func PodUID(labels map[string]string) types.UID {
	return types.UID(labels[LabelPodUID])
}

// RestartCount returns the restart count a container's annotations
// record: how many instances of it ran before.
func RestartCount(annotations map[string]string) int32 {
	n, _ := strconv.Atoi(annotations[annotationRestartCount])
	return int32(n)
}
