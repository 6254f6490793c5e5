package kubelet

import (
	"context"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/kubelet/internal/podconfig"
)

// Container returns the runtime ID and log file of a pod's container: the
// current instance, or with previous the one before it.
func (k *Kubelet) Container(ctx context.Context, pod *corev1.Pod, container string, previous bool) (string, string, error) {
	if podconfig.FindContainer(pod, container) == nil {
		return "", "", fmt.Errorf("container %s is not valid for pod %s", container, pod.Name)
	}
	rt, err := k.observe(ctx, pod.UID)
	if err != nil {
		return "", "", err
	}
	cur, prev := rt.latest(container)
	c := cur
	if previous {
		c = prev
	}
	if c == nil {
		if previous {
			return "", "", fmt.Errorf("previous terminated container %q in pod %q not found", container, pod.Name)
		}
		return "", "", fmt.Errorf("container %q in pod %q is waiting to start", container, pod.Name)
	}
	path := c.LogPath
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(k.podConfig.PodLogDir(pod), path)
	}
	return c.Id, path, nil
}

// Sandbox returns the ID of the pod's ready sandbox.
func (k *Kubelet) Sandbox(ctx context.Context, pod *corev1.Pod) (string, error) {
	rt, err := k.observe(ctx, pod.UID)
	if err != nil {
		return "", err
	}
	s := rt.readySandbox()
	if s == nil {
		return "", fmt.Errorf("pod %s/%s has no running sandbox", pod.Namespace, pod.Name)
	}
	return s.Id, nil
}

// PodField returns a downward API field of pod, with the pod IPs the
// kubelet last saw and the node's IPs.
func (k *Kubelet) PodField(pod *corev1.Pod, path string) (string, error) {
	ips := podIPsOf(pod)
	k.mu.Lock()
	w := k.workers[pod.UID]
	k.mu.Unlock()
	if w != nil {
		if p := w.current(); p != nil && len(p.Status.PodIPs) > 0 {
			ips = podIPsOf(p)
		}
	}
	return podconfig.PodField(pod, path, ips, k.podConfig.HostIPs)
}

// ContainerResource returns a downward API resource field of pod; unset
// limits are the node's allocatable.
func (k *Kubelet) ContainerResource(pod *corev1.Pod, ref *corev1.ResourceFieldSelector) (string, error) {
	c := podconfig.FindContainer(pod, ref.ContainerName)
	if c == nil {
		return "", fmt.Errorf("container %q not found", ref.ContainerName)
	}
	var allocatable corev1.ResourceList
	if k.cfg.Allocatable != nil {
		allocatable = k.cfg.Allocatable()
	}
	return podconfig.ContainerResource(pod, c, ref, allocatable)
}

// Wake makes the worker of the pod with this UID sync now.
func (k *Kubelet) Wake(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.workers[uid]; w != nil {
		w.wake()
	}
}
