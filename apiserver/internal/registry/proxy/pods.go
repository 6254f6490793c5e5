package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// NewPodStore returns the pods/proxy subresource: requests go to the pod's
// IP, at the port the id names (a number or a container port name) or else
// the first declared container port, through transport.
func NewPodStore(pods rest.Getter, transport http.RoundTripper) *Store {
	return &Store{
		newOptions: func() runtime.Object { return &corev1.PodProxyOptions{} },
		locate: func(ctx context.Context, id string) (target, error) {
			u, err := locatePod(ctx, pods, id)
			return target{URL: u, Transport: transport}, err
		},
	}
}

func locatePod(ctx context.Context, pods rest.Getter, id string) (*url.URL, error) {
	oid, err := parseID("pod", id)
	if err != nil {
		return nil, err
	}
	obj, err := pods.Get(ctx, oid.Name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("pod storage returned %T", obj))
	}
	ip := podIP(pod)
	if ip == "" {
		// The pod is not running yet; the client can retry.
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("pod %q has no IP address yet", pod.Name))
	}
	if err := proxyable(net.ParseIP(ip)); err != nil {
		return nil, err
	}
	port, err := podPort(pod, oid.Port)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: oid.Scheme, Host: hostPort(ip, port)}, nil
}

// podIP is the pod's primary IP.
func podIP(pod *corev1.Pod) string {
	if len(pod.Status.PodIPs) > 0 {
		return pod.Status.PodIPs[0].IP
	}
	return pod.Status.PodIP
}

// podPort resolves the port of an id: a number as given, a name through
// the containers' declared ports, and none to the first declared port (0
// when the pod declares none, leaving the scheme's default).
func podPort(pod *corev1.Pod, port string) (int32, error) {
	if port == "" {
		for _, c := range podContainers(pod) {
			if len(c.Ports) > 0 {
				return c.Ports[0].ContainerPort, nil
			}
		}
		return 0, nil
	}
	if n, numeric, err := portNumber(port); numeric {
		return n, err
	}
	for _, c := range podContainers(pod) {
		for _, p := range c.Ports {
			if p.Name == port {
				return p.ContainerPort, nil
			}
		}
	}
	return 0, apierrors.NewBadRequest(fmt.Sprintf("pod %q has no container port named %q", pod.Name, port))
}

// podContainers lists the app containers, then the init containers, whose
// restartable (sidecar) members may serve ports too.
func podContainers(pod *corev1.Pod) []corev1.Container {
	return append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...)
}
