// Command metrics-check is the metrics-server chart's helm test: from inside
// the cluster, with its pod's service account, it reads node and pod metrics
// through the aggregated metrics.k8s.io API, as kubectl top does, and fails
// unless every Ready node and at least one pod report CPU and memory.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "metrics-check:", err)
		os.Exit(1)
	}
}

// run retries until the metrics answer or ctx ends: a fresh metrics-server
// reports a node only after its second scrape.
func run(ctx context.Context) error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster config: %w", err)
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	metrics, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("metrics client: %w", err)
	}
	for {
		err = check(ctx, core, metrics)
		if err == nil {
			return nil
		}
		fmt.Println("waiting:", err)
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}
}

func check(ctx context.Context, core kubernetes.Interface, metrics metricsclient.Interface) error {
	nodes, err := core.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	nodeMetrics, err := metrics.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list metrics.k8s.io nodes: %w", err)
	}
	reported := map[string]bool{}
	for _, m := range nodeMetrics.Items {
		if !m.Usage.Cpu().IsZero() && !m.Usage.Memory().IsZero() {
			reported[m.Name] = true
			fmt.Printf("node %s: cpu %s memory %s\n", m.Name, m.Usage.Cpu(), m.Usage.Memory())
		}
	}
	for _, n := range nodes.Items {
		if ready(&n) && !reported[n.Name] {
			return fmt.Errorf("no CPU and memory figures for Ready node %s", n.Name)
		}
	}
	podMetrics, err := metrics.MetricsV1beta1().PodMetricses(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list metrics.k8s.io pods: %w", err)
	}
	if len(podMetrics.Items) == 0 {
		return errors.New("no pod metrics")
	}
	fmt.Printf("%d pods report metrics\n", len(podMetrics.Items))
	return nil
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
