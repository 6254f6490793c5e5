// Package hostports answers which host ports a pod holds and whether two
// pods' ports collide, for the scheduler's NodePorts filter and the
// kubelet's admission alike: one answer, so a pod the scheduler placed is
// never refused by the node for a port.
package hostports

import (
	"net"

	corev1 "k8s.io/api/core/v1"
)

// Of lists the host ports pod holds: its app containers' and its
// sidecars' (restartable init containers, which run beside them).
func Of(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	add := func(c *corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	return out
}

// Taken says whether p conflicts with a port in used: the same protocol
// (TCP when unset) and host port, on the same host IP or where either
// binds every address (an unset or unspecified host IP).
func Taken(p corev1.ContainerPort, used []corev1.ContainerPort) bool {
	for _, u := range used {
		if u.HostPort != p.HostPort || protocol(u) != protocol(p) {
			continue
		}
		if anyIP(p.HostIP) || anyIP(u.HostIP) || net.ParseIP(p.HostIP).Equal(net.ParseIP(u.HostIP)) {
			return true
		}
	}
	return false
}

func protocol(p corev1.ContainerPort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

func anyIP(ip string) bool {
	parsed := net.ParseIP(ip)
	return ip == "" || (parsed != nil && parsed.IsUnspecified())
}
