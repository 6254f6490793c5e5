package proxy

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLocatePod(t *testing.T) {
	pods := newObjects("pods",
		pod("web", "10.0.0.5", corev1.ContainerPort{Name: "http", ContainerPort: 8080}, corev1.ContainerPort{Name: "metrics", ContainerPort: 9090}),
		pod("bare", "10.0.0.6"),
		pod("v6", "fd00::6", corev1.ContainerPort{ContainerPort: 80}),
		pod("v6bare", "fd00::7"),
		pod("pending", ""),
		pod("loopback", "127.0.0.1", corev1.ContainerPort{ContainerPort: 80}),
		pod("linklocal", "169.254.169.254", corev1.ContainerPort{ContainerPort: 80}),
	)
	sidecar := pod("sidecar", "10.0.0.8", corev1.ContainerPort{ContainerPort: 80})
	always := corev1.ContainerRestartPolicyAlways
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "s", RestartPolicy: &always, Ports: []corev1.ContainerPort{{Name: "admin", ContainerPort: 15000}}}}
	pods.byName["sidecar"] = sidecar

	tests := []struct {
		name, id string
		want     string
		wantCode int32
	}{
		{name: "port number", id: "web:9999", want: "//10.0.0.5:9999"},
		{name: "named port", id: "web:metrics", want: "//10.0.0.5:9090"},
		{name: "no port takes the first declared", id: "web", want: "//10.0.0.5:8080"},
		{name: "https scheme", id: "https:web:8443", want: "https://10.0.0.5:8443"},
		{name: "no declared port leaves the default", id: "bare", want: "//10.0.0.6"},
		{name: "ipv6 with port", id: "v6", want: "//[fd00::6]:80"},
		{name: "ipv6 without port", id: "v6bare", want: "//[fd00::7]"},
		{name: "sidecar named port", id: "sidecar:admin", want: "//10.0.0.8:15000"},
		{name: "unknown port name", id: "web:nope", wantCode: 400},
		{name: "port out of range", id: "web:70000", wantCode: 400},
		{name: "pod without IP", id: "pending:80", wantCode: 503},
		{name: "loopback pod IP refused", id: "loopback", wantCode: 400},
		{name: "link-local pod IP refused", id: "linklocal", wantCode: 400},
		{name: "missing pod", id: "ghost:80", wantCode: 404},
		{name: "bad id", id: "a:b:c:d", wantCode: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := locatePod(context.Background(), pods, tt.id)
			if tt.wantCode != 0 {
				if got := statusCode(err); got != tt.wantCode {
					t.Fatalf("locatePod(%q) error = %v (code %d), want code %d", tt.id, err, got, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("locatePod(%q): %v", tt.id, err)
			}
			if u.String() != tt.want {
				t.Fatalf("locatePod(%q) = %q, want %q", tt.id, u, tt.want)
			}
		})
	}
}
