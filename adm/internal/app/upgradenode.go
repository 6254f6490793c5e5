package app

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"trireme.dev/adm/internal/kubelet"
	"trireme.dev/adm/internal/upgrade"
	"trireme.dev/adm/internal/workflow"
)

// runWorker upgrades a worker's kubelet to target (default: the
// apiserver's version), within the skew policy, through the node's own
// credentials: kubeadm's `upgrade node` on a worker, with the kubelet's
// restart that kubeadm leaves to the package manager.
func (d *upgradeData) runWorker(ctx context.Context, target string) error {
	c, err := clientFor(d.p.Kubeconfig("kubelet.conf"))
	if err != nil {
		return err
	}
	d.client = c
	if d.node, err = nodeName(d.p); err != nil {
		return err
	}
	sv, err := c.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("the apiserver's version: %w", err)
	}
	if target == "" {
		target = sv.GitVersion
	}
	tv, err := upgrade.ParseVersion(target)
	if err != nil {
		return err
	}
	av, err := upgrade.ParseVersion(sv.GitVersion)
	if err != nil {
		return fmt.Errorf("the apiserver's version: %w", err)
	}
	if err := upgrade.CheckKubelet(d.node, tv, av); err != nil {
		return err
	}
	n, err := c.CoreV1().Nodes().Get(ctx, d.node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", d.node, err)
	}
	d.state.Kubelets = map[string]string{d.node: n.Status.NodeInfo.KubeletVersion}
	binary, err := d.kubeletBinary(ctx, target)
	if err != nil {
		return err
	}
	if !n.Spec.Unschedulable {
		fmt.Fprintf(d.out, "Node %s is not cordoned: its pods keep running through the kubelet's restart, but drain it first if they must not see it.\n", d.node)
	}
	if err := workflow.NewRunner(d.out).Run(ctx, []workflow.Phase{d.kubeletPhase(binary, target)}, d.skip); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "\nThis node's kubelet runs %s. `kubectl uncordon %s` lets pods back on it.\n", target, d.node)
	return nil
}

// kubeletBinary is the kubelet executable to restart this node's kubelet
// with, refused before anything is changed unless it is of target; "" when
// the kubelet runs target already.
func (d *upgradeData) kubeletBinary(ctx context.Context, target string) (string, error) {
	if d.state.Kubelets[d.node] == target {
		return "", nil
	}
	binary, err := findBinary(kubelet.Binary)
	if err != nil {
		return "", err
	}
	v, err := kubelet.BinaryVersion(ctx, binary)
	if err != nil {
		return "", err
	}
	if v != target {
		return "", fmt.Errorf("%s is the kubelet of %s, not %s; nothing was changed: put the kubelet of %s beside triremeadm (its `make build` output)", binary, v, target, target)
	}
	return binary, nil
}

// kubeletPhase restarts this node's kubelet with binary (none when "") and
// waits until its Node reports target and is Ready.
func (d *upgradeData) kubeletPhase(binary, target string) workflow.Phase {
	return workflow.Phase{Name: "kubelet", Short: "Restart the kubelet with the new version's binary", Run: func(ctx context.Context, s *workflow.Status) error {
		if binary == "" {
			s.Printf("the kubelet of %s runs %s already", d.node, target)
			return nil
		}
		pid, err := restartKubelet(d.p, binary)
		if err != nil {
			return err
		}
		s.Printf("restarted the kubelet with %s under supervisor PID %d", binary, pid)
		start := time.Now()
		err = wait.PollUntilContextTimeout(ctx, time.Second, d.timeout, true, func(ctx context.Context) (bool, error) {
			n, err := d.client.CoreV1().Nodes().Get(ctx, d.node, metav1.GetOptions{})
			// Errors are expected while this node's apiserver is away.
			return err == nil && n.Status.NodeInfo.KubeletVersion == target && condition(n.Status.Conditions, corev1.NodeReady), nil
		})
		if err != nil {
			return fmt.Errorf("node %s does not report a Ready kubelet %s after %s (its log: %s): %w", d.node, target, d.timeout, d.p.LogFile("kubelet"), err)
		}
		s.Printf("node %s Ready with kubelet %s after %s", d.node, target, time.Since(start).Round(100*time.Millisecond))
		return nil
	}}
}
