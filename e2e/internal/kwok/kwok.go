// Package kwok runs kwok (sigs.k8s.io/kwok, built by `make kwok`) against
// an apiserver, so that Node objects made with Node become fake nodes:
// Ready, their Leases renewed, the pods bound to them Running. The scale
// harness (e2e/scale) and the dashboard's benchmark (e2e/dashboard) use it.
package kwok

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
)

// Label marks the Nodes kwok manages: "true" while it does. Setting it to
// "false" takes a node from kwok, which then stops renewing its Lease, as a
// machine that stops heartbeating.
const Label = "e2e.trireme.dev/kwok"

// StagesFile is the file of kwok's stages hack/build-kwok.sh writes beside
// the binary.
const StagesFile = "kwok-stages.yaml"

// DefaultBinary is where `make kwok` puts kwok when Trireme's binaries are
// looked up in testcluster.BinDir.
func DefaultBinary() string { return filepath.Join(testcluster.BinDir(), "kwok") }

// Locate checks that binary and its stages file (StagesFile beside it)
// exist and returns the stages file's path, or an error naming the command
// that builds both.
func Locate(binary string) (stages string, err error) {
	stages = filepath.Join(filepath.Dir(binary), StagesFile)
	for _, f := range []string{binary, stages} {
		if _, err := os.Stat(f); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("%s not found: run `make kwok` (hack/build-kwok.sh)", f)
			}
			return "", fmt.Errorf("stat %s: %w", f, err)
		}
	}
	return stages, nil
}

// Options say how to run kwok.
type Options struct {
	// Binary is kwok, Stages its stages file (Locate's answer).
	Binary, Stages string
	// Kubeconfig reaches the apiserver as an admin.
	Kubeconfig string
	// Dir receives kwok's configuration file.
	Dir string
	// Out receives kwok's output.
	Out io.Writer
}

// options raise kwok's parallelism (4 by default) so that the fake
// kubelets keep up with the control plane rather than pace it.
const options = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 32
  nodePlayStageParallelism: 8
  nodeLeaseParallelism: 16
`

// Start runs kwok managing the Nodes labelled Label=true, with its Leases
// of 40 s and pod IPs from 10.0.0.0/8. The caller stops the process it
// returns (by its PID, through Stop).
func Start(o Options) (*testcluster.Process, error) {
	stages, err := os.ReadFile(o.Stages)
	if err != nil {
		return nil, fmt.Errorf("read kwok stages: %w", err)
	}
	config := filepath.Join(o.Dir, "kwok.yaml")
	if err := os.WriteFile(config, append([]byte(options+"---\n"), stages...), 0o600); err != nil {
		return nil, fmt.Errorf("write kwok configuration: %w", err)
	}
	p, err := testcluster.StartProcess(o.Binary, []string{
		"--kubeconfig", o.Kubeconfig, "--config", config,
		"--manage-nodes-with-label-selector", Label + "=true",
		"--node-lease-duration-seconds", "40",
		"--cidr", "10.0.0.0/8", "--node-ip", "10.255.0.1", "--server-address", "127.0.0.1:0",
	}, o.Out)
	if err != nil {
		return nil, fmt.Errorf("start kwok: %w", err)
	}
	return p, nil
}

// Node returns a Node named name for kwok to manage, with room for 110
// pods of a machine of 32 CPUs and 256 GiB.
func Node(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{Label: "true", "kubernetes.io/hostname": name, "type": "kwok"},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// ReadyNodes counts the Nodes kwok manages that are Ready, read from the
// apiserver's cache.
func ReadyNodes(ctx context.Context, cs kubernetes.Interface) (int, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: Label + "=true"})
	if err != nil {
		return 0, fmt.Errorf("list kwok nodes: %w", err)
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, nil
}

// RunningPods counts the pods of namespace ns ("" for all) that are
// Running and not being deleted, read from the apiserver's cache.
func RunningPods(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0", FieldSelector: "status.phase=Running"})
	if err != nil {
		return 0, fmt.Errorf("list running pods: %w", err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			n++
		}
	}
	return n, nil
}
