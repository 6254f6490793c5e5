package hostports

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestOf(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "init", Ports: []corev1.ContainerPort{{HostPort: 1}}},
			{Name: "sidecar", RestartPolicy: &always, Ports: []corev1.ContainerPort{{HostPort: 2}, {ContainerPort: 9}}},
		},
		Containers: []corev1.Container{{Name: "app", Ports: []corev1.ContainerPort{{HostPort: 3, Protocol: corev1.ProtocolUDP}, {ContainerPort: 80}}}},
	}}
	var got []int32
	for _, p := range Of(pod) {
		got = append(got, p.HostPort)
	}
	if len(got) != 2 || got[0] != 3 || got[1] != 2 {
		t.Errorf("host ports = %v, want [3 2]: app containers' and sidecars', not a plain init container's", got)
	}
}

func TestTaken(t *testing.T) {
	port := func(ip string, n int32, proto corev1.Protocol) corev1.ContainerPort {
		return corev1.ContainerPort{HostIP: ip, HostPort: n, Protocol: proto}
	}
	for _, tc := range []struct {
		name string
		p    corev1.ContainerPort
		used []corev1.ContainerPort
		want bool
	}{
		{"nothing used", port("", 80, ""), nil, false},
		{"same port, unset protocol is TCP", port("", 80, ""), []corev1.ContainerPort{port("", 80, corev1.ProtocolTCP)}, true},
		{"same port, other protocol", port("", 80, corev1.ProtocolUDP), []corev1.ContainerPort{port("", 80, "")}, false},
		{"other port", port("", 81, ""), []corev1.ContainerPort{port("", 80, "")}, false},
		{"different host IPs", port("10.0.0.1", 80, ""), []corev1.ContainerPort{port("10.0.0.2", 80, "")}, false},
		{"same host IP", port("10.0.0.1", 80, ""), []corev1.ContainerPort{port("10.0.0.1", 80, "")}, true},
		{"unspecified binds every address", port("0.0.0.0", 80, ""), []corev1.ContainerPort{port("10.0.0.2", 80, "")}, true},
		{"used on every address", port("10.0.0.1", 80, ""), []corev1.ContainerPort{port("::", 80, "")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Taken(tc.p, tc.used); got != tc.want {
				t.Errorf("Taken = %v, want %v", got, tc.want)
			}
		})
	}
}
