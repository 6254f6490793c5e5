package kubelet

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// hook is a lifecycle handler (postStart or preStop) to run for one
// container instance.
type hook struct {
	pod *corev1.Pod
	// c is the container, id its instance in the runtime.
	c  *corev1.Container
	id string
	// handler is what to run, within timeout.
	handler *corev1.LifecycleHandler
	timeout time.Duration
	// podIPs are the sandbox's addresses; nil takes the pod status's.
	podIPs []string
}

// runHook runs a lifecycle handler (exec, httpGet or sleep) within its
// timeout.
func (k *Kubelet) runHook(ctx context.Context, hk *hook) error {
	h, timeout, podIPs := hk.handler, hk.timeout, hk.podIPs
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case h.Exec != nil:
		stdout, stderr, err := k.cfg.Runtime.ExecSync(ctx, hk.id, h.Exec.Command, timeout)
		if err != nil {
			return fmt.Errorf("exec %v: %w (output %q)", h.Exec.Command, err, string(stdout)+string(stderr))
		}
		return nil
	case h.HTTPGet != nil:
		host := h.HTTPGet.Host
		if host == "" {
			if len(podIPs) == 0 {
				podIPs = podIPsOf(hk.pod)
			}
			if len(podIPs) == 0 {
				return fmt.Errorf("httpGet hook: pod has no IP")
			}
			host = podIPs[0]
		}
		port, err := resolvePort(h.HTTPGet.Port, hk.c)
		if err != nil {
			return err
		}
		scheme := strings.ToLower(string(h.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), h.HTTPGet.Path)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("httpGet hook %s: %w", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			return fmt.Errorf("httpGet hook %s: status %d", url, resp.StatusCode)
		}
		return nil
	case h.Sleep != nil:
		select {
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
		case <-ctx.Done():
		}
		return nil
	}
	return nil
}

func podIPsOf(pod *corev1.Pod) []string {
	var out []string
	for _, ip := range pod.Status.PodIPs {
		out = append(out, ip.IP)
	}
	return out
}

// resolvePort turns a port number or container port name into a number.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if n := p.IntValue(); n > 0 {
		return n, nil
	}
	name := p.String()
	if c != nil {
		for _, cp := range c.Ports {
			if cp.Name == name {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("port %q not found", name)
}
