package podconfig

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// containerEnv resolves the container's environment: Service variables,
// then envFrom, then env (later entries win; $(VAR) refers to earlier
// ones), as upstream orders them.
func (b *Builder) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIPs []string) ([]*runtimeapi.KeyValue, error) {
	vars := map[string]string{}
	var order []string
	set := func(key, value string) {
		if _, ok := vars[key]; !ok {
			order = append(order, key)
		}
		vars[key] = value
	}
	for _, kv := range b.serviceEnv(pod) {
		set(kv.Key, string(kv.Value))
	}
	for _, from := range c.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm, err := b.configMap(ctx, pod.Namespace, from.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && ptr.Deref(from.ConfigMapRef.Optional, false) {
					continue
				}
				return nil, fmt.Errorf("configmap %q: %w", from.ConfigMapRef.Name, err)
			}
			data = cm.Data
		case from.SecretRef != nil:
			s, err := b.secret(ctx, pod.Namespace, from.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && ptr.Deref(from.SecretRef.Optional, false) {
					continue
				}
				return nil, fmt.Errorf("secret %q: %w", from.SecretRef.Name, err)
			}
			data = map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			set(from.Prefix+key, data[key])
		}
	}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		v, skip, err := b.envValueFrom(ctx, pod, c, e.ValueFrom, podIPs)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if !skip {
			set(e.Name, v)
		}
	}
	out := make([]*runtimeapi.KeyValue, 0, len(order))
	for _, key := range order {
		out = append(out, &runtimeapi.KeyValue{Key: key, Value: []byte(vars[key])})
	}
	return out, nil
}

func (b *Builder) envValueFrom(ctx context.Context, pod *corev1.Pod, c *corev1.Container, from *corev1.EnvVarSource, podIPs []string) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := PodField(pod, from.FieldRef.FieldPath, podIPs, b.HostIPs)
		return v, false, err
	case from.ResourceFieldRef != nil:
		v, err := ContainerResource(pod, c, from.ResourceFieldRef, b.nodeAllocatable())
		return v, false, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := b.configMap(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && ptr.Deref(ref.Optional, false) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("configmap %q: %w", ref.Name, err)
		}
		v, ok := cm.Data[ref.Key]
		if !ok {
			if ptr.Deref(ref.Optional, false) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)
		}
		return v, false, nil
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := b.secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && ptr.Deref(ref.Optional, false) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("secret %q: %w", ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			if ptr.Deref(ref.Optional, false) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)
		}
		return string(v), false, nil
	}
	return "", true, nil
}

func (b *Builder) configMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if b.Client == nil {
		return nil, fmt.Errorf("no apiserver connection")
	}
	return b.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

func (b *Builder) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	if b.Client == nil {
		return nil, fmt.Errorf("no apiserver connection")
	}
	return b.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// PodField returns the downward API value of a pod field path.
func PodField(pod *corev1.Pod, path string, podIPs, hostIPs []string) (string, error) {
	if inner, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(inner, "']")], nil
	}
	if inner, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(inner, "']")], nil
	}
	first := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return s[0]
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return first(hostIPs), nil
	case "status.hostIPs":
		return strings.Join(hostIPs, ","), nil
	case "status.podIP":
		return first(podIPs), nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	}
	return "", fmt.Errorf("unsupported field path %q", path)
}

func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

// FindContainer returns the pod's init, app or ephemeral container with
// this name, nil if it has none. An ephemeral container is returned as
// the Container its fields make.
func FindContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return EphemeralContainer(&pod.Spec.EphemeralContainers[i])
		}
	}
	return nil
}

// EphemeralContainer is an ephemeral container as a Container: the API
// keeps their fields alike so that the kubelet runs both the same way.
func EphemeralContainer(ec *corev1.EphemeralContainer) *corev1.Container {
	return (*corev1.Container)(&ec.EphemeralContainerCommon)
}

// ContainerResource returns the downward API value of a resource field,
// rounded up to the divisor as upstream does. An unset (or zero) cpu,
// memory or ephemeral-storage limit is the node's allocatable, as
// upstream's kubelet reports it: the most the container may use.
func ContainerResource(pod *corev1.Pod, c *corev1.Container, ref *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	target := c
	if ref.ContainerName != "" {
		target = FindContainer(pod, ref.ContainerName)
		if target == nil {
			return "", fmt.Errorf("container %q not found", ref.ContainerName)
		}
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	var list corev1.ResourceList
	switch kind {
	case "limits":
		list = target.Resources.Limits
	case "requests":
		list = target.Resources.Requests
	default:
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	q := list[corev1.ResourceName(name)]
	if kind == "limits" && q.IsZero() && defaultsToAllocatable(corev1.ResourceName(name)) {
		q = allocatable[corev1.ResourceName(name)]
		// A pod-level limit bounds the container below the node's.
		if pod.Spec.Resources != nil {
			if pl := pod.Spec.Resources.Limits[corev1.ResourceName(name)]; !pl.IsZero() {
				q = pl
			}
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == "cpu" {
		v := int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))
		if v == 0 && kind == "requests" {
			v = 0
		}
		return fmt.Sprint(v), nil
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))), nil
}

// defaultsToAllocatable says whether an unset limit of the resource reads
// as the node's allocatable; hugepages are never overcommitted, so their
// limit is always set.
func defaultsToAllocatable(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage
}

// expand replaces $(VAR) references with their values; $$ escapes a $,
// and references to unknown names stay as they are, as upstream expands.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteByte(s[i])
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// serviceEnv returns the docker-link-style variables of the Services
// visible to the pod, as upstream's kubelet sets them.
func (b *Builder) serviceEnv(pod *corev1.Pod) []*runtimeapi.KeyValue {
	if b.Services == nil {
		return nil
	}
	links := ptr.Deref(pod.Spec.EnableServiceLinks, true)
	services, err := b.Services.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*runtimeapi.KeyValue
	for _, s := range services {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		master := s.Namespace == "default" && s.Name == "kubernetes"
		if !(master || (links && s.Namespace == pod.Namespace)) {
			continue
		}
		out = append(out, serviceVars(s)...)
	}
	return out
}

func serviceVars(s *corev1.Service) []*runtimeapi.KeyValue {
	if len(s.Spec.Ports) == 0 {
		return nil
	}
	name := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
	ip := s.Spec.ClusterIP
	p0 := s.Spec.Ports[0]
	out := []*runtimeapi.KeyValue{
		{Key: name + "_SERVICE_HOST", Value: bv(ip)},
		{Key: name + "_SERVICE_PORT", Value: bv(strconv.Itoa(int(p0.Port)))},
		{Key: name + "_PORT", Value: bv(fmt.Sprintf("%s://%s", strings.ToLower(string(p0.Protocol)), net.JoinHostPort(ip, strconv.Itoa(int(p0.Port)))))},
	}
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			out = append(out, &runtimeapi.KeyValue{Key: name + "_SERVICE_PORT_" + strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_")), Value: bv(strconv.Itoa(int(p.Port)))})
		}
		proto := strings.ToLower(string(p.Protocol))
		prefix := fmt.Sprintf("%s_PORT_%d_%s", name, p.Port, strings.ToUpper(proto))
		out = append(out,
			&runtimeapi.KeyValue{Key: prefix, Value: bv(fmt.Sprintf("%s://%s", proto, net.JoinHostPort(ip, strconv.Itoa(int(p.Port)))))},
			&runtimeapi.KeyValue{Key: prefix + "_PROTO", Value: bv(proto)},
			&runtimeapi.KeyValue{Key: prefix + "_PORT", Value: bv(strconv.Itoa(int(p.Port)))},
			&runtimeapi.KeyValue{Key: prefix + "_ADDR", Value: bv(ip)},
		)
	}
	return out
}

// bv is a CRI KeyValue's value.
func bv(s string) []byte { return []byte(s) }
