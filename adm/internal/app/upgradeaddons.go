package app

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"trireme.dev/adm/internal/addons"
	"trireme.dev/adm/internal/clusterphases"
	"trireme.dev/adm/internal/staticpod"
	"trireme.dev/adm/internal/upgrade"
	"trireme.dev/adm/internal/workflow"
)

// upgradeAddons moves the proxy DaemonSet and the addons release to target
// once every control-plane node's apiserver runs it: kubeadm upgrades its
// addons after the last one.
func (d *upgradeData) upgradeAddons(ctx context.Context, s *workflow.Status, target string) error {
	want := d.repo + "/" + staticpod.Images[staticpod.APIServer].Image + ":" + target
	pods, err := d.client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=" + staticpod.APIServer})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if p.Spec.Containers[0].Image != want {
			s.Printf("left for later: the apiserver on %s runs %s", p.Spec.NodeName, p.Spec.Containers[0].Image)
			return nil
		}
	}
	if err := d.upgradeProxy(ctx, s, target); err != nil {
		return err
	}
	return d.upgradeRelease(ctx, s, target)
}

// upgradeProxy moves the proxy DaemonSet to target.
func (d *upgradeData) upgradeProxy(ctx context.Context, s *workflow.Status, target string) error {
	if !d.proxy {
		s.Printf("no DaemonSet kube-system/%s (the addon phase was skipped): no proxy to upgrade", clusterphases.ProxyName)
		return nil
	}
	ds, err := d.client.AppsV1().DaemonSets(metav1.NamespaceSystem).Get(ctx, clusterphases.ProxyName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	spec := &corev1.Pod{Spec: ds.Spec.Template.Spec}
	if !upgrade.SetImage(spec, d.repo, target) {
		s.Printf("the proxy already runs %s", target)
		return nil
	}
	ds.Spec.Template.Spec = spec.Spec
	if _, err := d.client.AppsV1().DaemonSets(metav1.NamespaceSystem).Update(ctx, ds, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s.Printf("DaemonSet kube-system/%s now rolls out %s", clusterphases.ProxyName, target)
	return nil
}

// upgradeRelease upgrades the addons release to this triremeadm's chart
// with its images at target, keeping every value the release has (those
// init computed for the cluster, and a user's `helm upgrade --set`), then
// waits for each addon as init does.
func (d *upgradeData) upgradeRelease(ctx context.Context, s *workflow.Status, target string) error {
	admin, ns := d.p.Kubeconfig("admin.conf"), addons.Namespace
	getter := genericclioptions.NewConfigFlags(false)
	getter.KubeConfig, getter.Namespace = &admin, &ns
	hc, err := addons.NewClient(getter, logr.FromContextOrDiscard(ctx).WithName("helm"))
	if err != nil {
		return err
	}
	switch installed, err := hc.Installed(); {
	case err != nil:
		return err
	case !installed:
		s.Printf("no release %s/%s (the addon phase was skipped): no addons to upgrade", addons.Namespace, addons.ReleaseName)
		return nil
	}
	ch, err := addons.Chart(target)
	if err != nil {
		return err
	}
	start := time.Now()
	rel, err := hc.Upgrade(ctx, ch, map[string]any{"global": map[string]any{"imageTag": target}})
	if err != nil {
		return err
	}
	s.Printf("release %s/%s revision %d (chart %s, %s)", rel.Namespace, rel.Name, rel.Version, rel.Chart.Metadata.Name, rel.Chart.Metadata.AppVersion)
	reportAddons(s, addons.Wait(ctx, d.client, addons.Workloads(rel.Manifest), addonWaitTimeout))
	s.Printf("upgraded and checked in %s", time.Since(start).Round(100*time.Millisecond))
	return nil
}
