package load

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Labels the driver puts on everything it creates, so it can find and delete
// exactly that.
const (
	runLabel    = "apiload/run"
	clientLabel = "apiload/client"
	phaseLabel  = "apiload/phase"
)

// kindClient runs each verb against one kind in one namespace. Objects travel
// as metav1.Object so the verb loops need not know the kind.
type kindClient interface {
	create(ctx context.Context, name string, labels map[string]string) (metav1.Object, error)
	get(ctx context.Context, name string) error
	list(ctx context.Context, opts metav1.ListOptions) (int, error)
	// update stores obj with annotation apiload/update set to n, using obj's
	// resourceVersion, and returns the stored object.
	update(ctx context.Context, obj metav1.Object, n int) (metav1.Object, error)
	// patch sets annotation apiload/patch to n with a strategic merge patch.
	patch(ctx context.Context, name string, n int) (metav1.Object, error)
	watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	delete(ctx context.Context, name string) error
	deleteCollection(ctx context.Context, selector string) error
}

// typedKind adapts one of client-go's generated typed clients (the methods
// of api are what ConfigMapInterface and PodInterface have in common) to
// kindClient.
type typedKind[T interface {
	*E
	metav1.Object
}, E any, L any] struct {
	api interface {
		Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
		Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
		List(ctx context.Context, opts metav1.ListOptions) (L, error)
		Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
		Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
		Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
		Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
		DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error
	}
	newObj  func(name string, labels map[string]string) T
	itemsOf func(L) int
}

func (k typedKind[T, E, L]) create(ctx context.Context, name string, labels map[string]string) (metav1.Object, error) {
	return k.api.Create(ctx, k.newObj(name, labels), metav1.CreateOptions{})
}

func (k typedKind[T, E, L]) get(ctx context.Context, name string) error {
	_, err := k.api.Get(ctx, name, metav1.GetOptions{})
	return err
}

func (k typedKind[T, E, L]) list(ctx context.Context, opts metav1.ListOptions) (int, error) {
	l, err := k.api.List(ctx, opts)
	if err != nil {
		return 0, err
	}
	return k.itemsOf(l), nil
}

func (k typedKind[T, E, L]) update(ctx context.Context, obj metav1.Object, n int) (metav1.Object, error) {
	typed, ok := obj.(T)
	if !ok {
		return nil, fmt.Errorf("update: got %T", obj)
	}
	copied := T(new(E))
	*copied = *typed
	ann := make(map[string]string, len(typed.GetAnnotations())+1)
	for k, v := range typed.GetAnnotations() {
		ann[k] = v
	}
	ann["apiload/update"] = strconv.Itoa(n)
	copied.SetAnnotations(ann)
	return k.api.Update(ctx, copied, metav1.UpdateOptions{})
}

func (k typedKind[T, E, L]) patch(ctx context.Context, name string, n int) (metav1.Object, error) {
	body := fmt.Sprintf(`{"metadata":{"annotations":{"apiload/patch":%q}}}`, strconv.Itoa(n))
	return k.api.Patch(ctx, name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{})
}

func (k typedKind[T, E, L]) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return k.api.Watch(ctx, opts)
}

func (k typedKind[T, E, L]) delete(ctx context.Context, name string) error {
	zero := int64(0)
	return k.api.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
}

func (k typedKind[T, E, L]) deleteCollection(ctx context.Context, selector string) error {
	// Grace period 0: without a kubelet, unscheduled pods would otherwise be
	// left terminating on servers that make pod deletion graceful.
	zero := int64(0)
	return k.api.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: selector})
}

// protobufConfigMapKind is the --kinds name of ConfigMaps over a protobuf
// connection whatever --protobuf says, so one run reports ConfigMaps over
// JSON, over protobuf and custom resources (JSON only) side by side.
const protobufConfigMapKind = "configmaps-protobuf"

// newKindClient returns the client for kind in namespace ns.
func newKindClient(cs kubernetes.Interface, kind, ns string) (kindClient, error) {
	switch kind {
	case "configmaps", protobufConfigMapKind:
		return typedKind[*corev1.ConfigMap, corev1.ConfigMap, *corev1.ConfigMapList]{
			api:     cs.CoreV1().ConfigMaps(ns),
			newObj:  newConfigMap,
			itemsOf: func(l *corev1.ConfigMapList) int { return len(l.Items) },
		}, nil
	case "pods":
		return typedKind[*corev1.Pod, corev1.Pod, *corev1.PodList]{
			api:     cs.CoreV1().Pods(ns),
			newObj:  newPod,
			itemsOf: func(l *corev1.PodList) int { return len(l.Items) },
		}, nil
	}
	return nil, fmt.Errorf("unknown kind %q", kind)
}

// newConfigMap is a small ConfigMap of a realistic shape: a few keys of
// configuration text.
func newConfigMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Data: map[string]string{
			"app.properties": "log.level=info\nlisten=:8080\ncache.size=256\n",
			"feature-flags":  "alpha=false,beta=true",
		},
	}
}

// newPod is a one-container pod like `kubectl run`'s, so defaulting and
// validation of a typical pod are part of what is measured.
func newPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:    "main",
				Image:   "busybox",
				Command: []string{"sleep", "3600"},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("10m"),
						corev1.ResourceMemory: resource.MustParse("16Mi"),
					},
				},
			}},
		},
	}
}

// encodedSize describes how large one object of kind is on the wire as the
// driver sends it (before the server adds uid, timestamps and managed
// fields), so the kinds' figures can be compared at equal size.
func encodedSize(kind string, labels map[string]string) string {
	var obj any
	var proto interface{ Size() int }
	switch kind {
	case "configmaps", protobufConfigMapKind:
		cm := newConfigMap("load-0-1", labels)
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		obj, proto = cm, cm
	case "pods":
		p := newPod("load-0-1", labels)
		p.APIVersion, p.Kind = "v1", "Pod"
		obj, proto = p, p
	case customResourceKind, unstructuredCRKind:
		obj = newCustomResource("load-0-1", labels).Object
	default:
		return "?"
	}
	j, err := json.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	if kind == protobufConfigMapKind {
		return fmt.Sprintf("%d B protobuf (%d B as JSON)", proto.Size(), len(j))
	}
	return fmt.Sprintf("%d B JSON", len(j))
}
