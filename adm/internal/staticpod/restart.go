package staticpod

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"trireme.dev/adm/internal/clusterphases"
)

// RestartedAtAnnotation on a static pod is when triremeadm last restarted it:
// a manifest whose content changed is a new pod to the kubelet, which stops
// the old one and starts it again (kubeadm restarts static pods the same way).
const RestartedAtAnnotation = "triremeadm.trireme.dev/restarted-at"

// RestartOrder is the order static pods are restarted in: etcd before the
// apiserver that needs it, the apiserver before its clients.
var RestartOrder = []string{Etcd, APIServer, ControllerManager, Scheduler, CloudControllerManager, VIPManager}

// UpgradeOrder is the order upgrade replaces static pods in: the VIP
// manager first (it needs nothing but the Lease API, and the new one hands
// the address over when this node's apiserver is replaced next), then
// RestartOrder, then the etcd snapshot schedule, which nothing else waits for.
var UpgradeOrder = []string{VIPManager, Etcd, APIServer, ControllerManager, Scheduler, CloudControllerManager, EtcdSnapshot}

// Restart rewrites component's manifest with RestartedAtAnnotation set to now,
// and returns the pod it wrote; a missing manifest gives (nil, nil).
func Restart(manifestsDir, component string, now time.Time) (*corev1.Pod, error) {
	path := Path(manifestsDir, component)
	pod, err := Read(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[RestartedAtAnnotation] = now.UTC().Format(time.RFC3339Nano)
	if err := Replace(manifestsDir, component, pod); err != nil {
		return nil, fmt.Errorf("restart %s: %w", component, err)
	}
	return pod, nil
}

// Replace writes pod as component's manifest in one step.
func Replace(manifestsDir, component string, pod *corev1.Pod) error {
	data, err := yaml.Marshal(pod)
	if err != nil {
		return err
	}
	return ReplaceFile(manifestsDir, component, data)
}

// ReplaceFile writes data as component's manifest in one step: a dot file,
// which the kubelet skips, renamed into place, so it never reads half a
// manifest.
func ReplaceFile(manifestsDir, component string, data []byte) error {
	tmp := filepath.Join(manifestsDir, "."+component+".yaml.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, Path(manifestsDir, component))
}

// HealthEndpoint is the endpoint of pod's liveness probe, which answers once
// the component serves (nil without an HTTP probe).
func HealthEndpoint(pod *corev1.Pod) *clusterphases.Endpoint {
	if len(pod.Spec.Containers) == 0 || pod.Spec.Containers[0].LivenessProbe == nil || pod.Spec.Containers[0].LivenessProbe.HTTPGet == nil {
		return nil
	}
	g := pod.Spec.Containers[0].LivenessProbe.HTTPGet
	host := g.Host
	if host == "" {
		host = "127.0.0.1"
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	return &clusterphases.Endpoint{Name: pod.Name, URL: scheme + "://" + net.JoinHostPort(host, strconv.Itoa(g.Port.IntValue())) + g.Path}
}

// WaitRestarted waits until the container runtime at socket runs a container
// of component's static pod created at or after since, and then until the
// pod's liveness endpoint answers: the component serves with what it loaded
// at its start.
func WaitRestarted(ctx context.Context, socket string, pod *corev1.Pod, since time.Time, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", socket, err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	filter := &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{
			"io.kubernetes.pod.namespace":  pod.Namespace,
			"io.kubernetes.container.name": pod.Spec.Containers[0].Name,
		},
	}
	for {
		list, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
		if err == nil && newer(list.Containers, since) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not restarted after %s (no container of it started since %s)", pod.Name, timeout, since.Format(time.RFC3339))
		case <-time.After(500 * time.Millisecond):
		}
	}
	e := HealthEndpoint(pod)
	if e == nil {
		return nil
	}
	deadline, _ := ctx.Deadline()
	return clusterphases.WaitHealthy(ctx, []clusterphases.Endpoint{*e}, time.Until(deadline), nil)
}

// newer reports whether one of cs was created at or after since; CRI's
// times are nanoseconds, since is truncated to the second so that clocks
// with coarser stamps still count.
func newer(cs []*runtimeapi.Container, since time.Time) bool {
	for _, c := range cs {
		if c.CreatedAt >= since.Truncate(time.Second).UnixNano() {
			return true
		}
	}
	return false
}
