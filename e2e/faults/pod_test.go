package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/componentbase/testwait"
)

// steadyPod is a pod on the worker that no fault should restart.
type steadyPod struct {
	name, uid, containerID string
}

// startSteadyPod runs a pod on the worker (on the host's network: the suite
// installs no pod network) and records its container.
func startSteadyPod(t *testing.T, c *haCluster, name string) *steadyPod {
	t.Helper()
	ctx := context.Background()
	image, err := nodeImage(ctx, c, c.worker().Name, "busybox")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: c.worker().Name},
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: new(int64),
			Containers:                    []corev1.Container{{Name: "sleep", Image: image, Command: []string{"sleep", "1000000"}}},
		},
	}
	if _, err := c.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the steady pod: %v", err)
	}
	var s steadyPod
	testwait.ForNil(t, 2*time.Minute, "the steady pod running", func() error {
		p, err := c.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil {
			return fmt.Errorf("phase %s, containers %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		s = steadyPod{name: name, uid: string(p.UID), containerID: p.Status.ContainerStatuses[0].ContainerID}
		return nil
	})
	return &s
}

// checkUnchanged fails the test unless the pod is the same pod with the
// same container, never restarted.
func (s *steadyPod) checkUnchanged(t *testing.T, c *haCluster) {
	t.Helper()
	p, err := c.client.CoreV1().Pods(metav1.NamespaceDefault).Get(context.Background(), s.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := p.Status.ContainerStatuses
	switch {
	case string(p.UID) != s.uid:
		t.Errorf("the steady pod was replaced")
	case len(cs) != 1 || cs[0].State.Running == nil:
		t.Errorf("the steady pod's container is not running: %+v", cs)
	case cs[0].ContainerID != s.containerID || cs[0].RestartCount != 0:
		t.Errorf("the steady pod's container was restarted: %s (was %s), %d restarts", cs[0].ContainerID, s.containerID, cs[0].RestartCount)
	}
}

// nodeImage is the reference of the trireme.dev/<name> image as the node
// reports it.
func nodeImage(ctx context.Context, c *haCluster, node, name string) (string, error) {
	n, err := c.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, img := range n.Status.Images {
		for _, ref := range img.Names {
			if strings.HasPrefix(ref, "trireme.dev/"+name+":") {
				return ref, nil
			}
		}
	}
	return "", fmt.Errorf("no trireme.dev/%s image on %s", name, node)
}
