package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	genericrest "k8s.io/apiserver/pkg/registry/generic/rest"
	"k8s.io/apiserver/pkg/registry/rest"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// kubeletLocator finds the kubelet that runs a pod. Unlike nodes/proxy it
// does not refuse loopback or link-local node addresses: the apiserver
// must reach its own node's kubelet, as upstream's connection does.
type kubeletLocator struct {
	pods, nodes rest.Getter
	kubelet     KubeletConfig
	transport   http.RoundTripper
}

func (l kubeletLocator) pod(ctx context.Context, name string) (*corev1.Pod, error) {
	obj, err := l.pods.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("pod storage returned %T", obj))
	}
	return pod, nil
}

// kubeletURL is https://<node address>:<kubelet port>.
func (l kubeletLocator) kubeletURL(ctx context.Context, nodeName string) (*url.URL, error) {
	obj, err := l.nodes.Get(ctx, nodeName, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("node storage returned %T", obj))
	}
	host, err := nodeAddress(node, l.kubelet.PreferredAddressTypes)
	if err != nil {
		return nil, err
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port <= 0 {
		port = DefaultKubeletPort
	}
	return &url.URL{Scheme: "https", Host: hostPort(host, port)}, nil
}

// containerOf returns the named container, or the pod's only one;
// upstream's messages, since kubectl users read them.
func containerOf(pod *corev1.Pod, name string) (string, error) {
	if name != "" {
		for _, c := range append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...) {
			if c.Name == name {
				return name, nil
			}
		}
		for _, c := range pod.Spec.EphemeralContainers {
			if c.Name == name {
				return name, nil
			}
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
	}
	if len(pod.Spec.Containers) == 1 {
		return pod.Spec.Containers[0].Name, nil
	}
	names := make([]string, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names))
}

// LogStore is pods/log: the kubelet's /containerLogs streamed back.
type LogStore struct{ l kubeletLocator }

// NewLogStore returns pods/log.
func NewLogStore(pods, nodes rest.Getter, kubelet KubeletConfig, transport http.RoundTripper) *LogStore {
	return &LogStore{kubeletLocator{pods: pods, nodes: nodes, kubelet: kubelet, transport: transport}}
}

var (
	_ rest.GetterWithOptions = &LogStore{}
	_ rest.StorageMetadata   = &LogStore{}
)

// New implements rest.Storage.
func (s *LogStore) New() runtime.Object { return &corev1.Pod{} }

// Destroy implements rest.Storage.
func (s *LogStore) Destroy() {}

// ProducesMIMETypes implements rest.StorageMetadata: logs are text.
func (s *LogStore) ProducesMIMETypes(string) []string {
	return []string{"text/plain", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
}

// ProducesObject implements rest.StorageMetadata.
func (s *LogStore) ProducesObject(string) any { return "" }

// NewGetOptions implements rest.GetterWithOptions.
func (s *LogStore) NewGetOptions() (runtime.Object, bool, string) {
	return &corev1.PodLogOptions{}, false, ""
}

// Get implements rest.GetterWithOptions.
func (s *LogStore) Get(ctx context.Context, name string, opts runtime.Object) (runtime.Object, error) {
	o, ok := opts.(*corev1.PodLogOptions)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid options %T", opts))
	}
	if o.TailLines != nil && *o.TailLines < 0 {
		return nil, apierrors.NewBadRequest("tailLines must be 0 or more")
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		return nil, apierrors.NewBadRequest("limitBytes must be 1 or more")
	}
	if o.SinceSeconds != nil && o.SinceTime != nil {
		return nil, apierrors.NewBadRequest("at most one of sinceTime or sinceSeconds may be specified")
	}
	pod, err := s.l.pod(ctx, name)
	if err != nil {
		return nil, err
	}
	container, err := containerOf(pod, o.Container)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName == "" {
		// Not scheduled yet: nothing to show, as upstream answers.
		return &genericrest.LocationStreamer{}, nil
	}
	u, err := s.l.kubeletURL(ctx, pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	u.Path = fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container)
	q := url.Values{}
	if o.Follow {
		q.Set("follow", "true")
	}
	if o.Previous {
		q.Set("previous", "true")
	}
	if o.Timestamps {
		q.Set("timestamps", "true")
	}
	if o.SinceSeconds != nil {
		q.Set("sinceSeconds", strconv.FormatInt(*o.SinceSeconds, 10))
	}
	if o.SinceTime != nil {
		q.Set("sinceTime", o.SinceTime.UTC().Format(time.RFC3339))
	}
	if o.TailLines != nil {
		q.Set("tailLines", strconv.FormatInt(*o.TailLines, 10))
	}
	if o.LimitBytes != nil {
		q.Set("limitBytes", strconv.FormatInt(*o.LimitBytes, 10))
	}
	u.RawQuery = q.Encode()
	return &genericrest.LocationStreamer{
		Location:        u,
		Transport:       s.l.transport,
		ContentType:     "text/plain",
		Flush:           o.Follow,
		ResponseChecker: genericrest.NewGenericHttpResponseChecker(corev1.Resource("pods/log"), name),
		RedirectChecker: genericrest.PreventRedirects,
	}, nil
}

// StreamStore is pods/exec, pods/attach or pods/portforward: the upgraded
// connection is proxied to the kubelet, and kubectl's WebSocket requests
// are translated to the SPDY the kubelet speaks, as upstream's apiserver
// does.
type StreamStore struct {
	l    kubeletLocator
	kind string
}

var _ rest.Connecter = &StreamStore{}

// NewExecStore returns pods/exec.
func NewExecStore(pods, nodes rest.Getter, kubelet KubeletConfig, transport http.RoundTripper) *StreamStore {
	return &StreamStore{kubeletLocator{pods, nodes, kubelet, transport}, "exec"}
}

// NewAttachStore returns pods/attach.
func NewAttachStore(pods, nodes rest.Getter, kubelet KubeletConfig, transport http.RoundTripper) *StreamStore {
	return &StreamStore{kubeletLocator{pods, nodes, kubelet, transport}, "attach"}
}

// NewPortForwardStore returns pods/portforward.
func NewPortForwardStore(pods, nodes rest.Getter, kubelet KubeletConfig, transport http.RoundTripper) *StreamStore {
	return &StreamStore{kubeletLocator{pods, nodes, kubelet, transport}, "portforward"}
}

// New implements rest.Storage.
func (s *StreamStore) New() runtime.Object {
	switch s.kind {
	case "exec":
		return &corev1.PodExecOptions{}
	case "attach":
		return &corev1.PodAttachOptions{}
	}
	return &corev1.PodPortForwardOptions{}
}

// Destroy implements rest.Storage.
func (s *StreamStore) Destroy() {}

// ConnectMethods implements rest.Connecter.
func (s *StreamStore) ConnectMethods() []string { return []string{"GET", "POST"} }

// NewConnectOptions implements rest.Connecter.
func (s *StreamStore) NewConnectOptions() (runtime.Object, bool, string) {
	return s.New(), false, ""
}

// Connect implements rest.Connecter.
func (s *StreamStore) Connect(ctx context.Context, name string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	pod, err := s.l.pod(ctx, name)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	u, err := s.l.kubeletURL(ctx, pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	var stream translator.Options
	switch o := opts.(type) {
	case *corev1.PodExecOptions:
		container, err := containerOf(pod, o.Container)
		if err != nil {
			return nil, err
		}
		if len(o.Command) == 0 {
			return nil, apierrors.NewBadRequest("you must specify at least 1 command")
		}
		u.Path = fmt.Sprintf("/exec/%s/%s/%s", pod.Namespace, pod.Name, container)
		for _, c := range o.Command {
			q.Add("command", c)
		}
		stream = translator.Options{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Tty: o.TTY}
	case *corev1.PodAttachOptions:
		container, err := containerOf(pod, o.Container)
		if err != nil {
			return nil, err
		}
		u.Path = fmt.Sprintf("/attach/%s/%s/%s", pod.Namespace, pod.Name, container)
		stream = translator.Options{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Tty: o.TTY}
	case *corev1.PodPortForwardOptions:
		u.Path = fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name)
		for _, p := range o.Ports {
			q.Add("port", strconv.Itoa(int(p)))
		}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid options %T", opts))
	}
	if s.kind != "portforward" {
		for k, v := range map[string]bool{"input": stream.Stdin, "output": stream.Stdout, "error": stream.Stderr, "tty": stream.Tty} {
			if v {
				q.Set(k, "1")
			}
		}
	}
	u.RawQuery = q.Encode()
	h := utilproxy.NewUpgradeAwareHandler(u, s.l.transport, false, true, utilproxy.NewErrorResponder(responder))
	if s.kind == "portforward" {
		return translator.NewTranslatingHandler(h, translator.NewTunnelingHandler(h), wsstream.IsWebSocketRequestWithTunnelingProtocol), nil
	}
	st := translator.NewStreamTranslatorHandler(u, s.l.transport, 0, stream)
	return translator.NewTranslatingHandler(h, st, wsstream.IsWebSocketRequestWithStreamCloseProtocol), nil
}
