package kubelet

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Labels and annotations on CRI objects, spelt as upstream's kubelet spells
// them so that crictl and tools written for upstream read them.
const (
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
	labelContainerType = "io.kubernetes.container.type"

	annotationRestartCount   = "io.kubernetes.container.restartCount"
	annotationTermMsgPath    = "io.kubernetes.container.terminationMessagePath"
	annotationTermMsgPolicy  = "io.kubernetes.container.terminationMessagePolicy"
	annotationGracePeriod    = "io.kubernetes.pod.terminationGracePeriod"
	annotationContainerImage = "io.kubernetes.container.image"

	containerTypeInit    = "INIT"
	containerTypeRegular = "REGULAR"
)

func sandboxLabels(pod *corev1.Pod) map[string]string {
	l := map[string]string{}
	for k, v := range pod.Labels {
		l[k] = v
	}
	l[labelPodName] = pod.Name
	l[labelPodNamespace] = pod.Namespace
	l[labelPodUID] = string(pod.UID)
	return l
}

func containerLabels(pod *corev1.Pod, name, ctype string) map[string]string {
	return map[string]string{
		labelPodName:       pod.Name,
		labelPodNamespace:  pod.Namespace,
		labelPodUID:        string(pod.UID),
		labelContainerName: name,
		labelContainerType: ctype,
	}
}

// podUIDOf returns the pod UID a CRI object's labels name.
func podUIDOf(labels map[string]string) types.UID {
	return types.UID(labels[labelPodUID])
}

func restartCountOf(annotations map[string]string) int32 {
	n, _ := strconv.Atoi(annotations[annotationRestartCount])
	return int32(n)
}

func containerNameOf(c *runtimeapi.Container) string {
	if c.Labels[labelContainerName] != "" {
		return c.Labels[labelContainerName]
	}
	return c.GetMetadata().GetName()
}
