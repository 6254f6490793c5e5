package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/clusterphases"
	"trireme.dev/adm/internal/etcdmember"
	"trireme.dev/adm/internal/etcdsnapshot"
	"trireme.dev/adm/internal/images"
	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/staticpod"
	"trireme.dev/adm/internal/upgrade"
	"trireme.dev/adm/internal/version"
	"trireme.dev/adm/internal/workflow"
)

// upgradeData is what upgrade's steps share.
type upgradeData struct {
	g          *global
	repo       string
	certDir    string
	force      bool
	renewCerts bool
	timeout    time.Duration
	skip       []string
	out        io.Writer

	p      paths.Paths
	client kubernetes.Interface
	node   string
	state  upgrade.State
	held   map[string]bool
	backup string
	// proxy says the proxy DaemonSet is installed (not without the addon phase).
	proxy bool
}

func newUpgradeCommand(g *global, out io.Writer) *cobra.Command {
	d := &upgradeData{g: g, out: out}
	cmd := &cobra.Command{Use: "upgrade", Short: "Upgrade the control plane and nodes to another version, as kubeadm upgrade"}
	cmd.PersistentFlags().StringVar(&d.repo, "image-repository", v1alpha1.DefaultImageRepository, "The images' repository prefix.")
	cmd.PersistentFlags().StringVar(&d.certDir, "cert-dir", v1alpha1.DefaultCertificatesDir, "The certificates directory.")
	plan := &cobra.Command{
		Use:   "plan [VERSION]",
		Short: "Show the running and installable versions and what apply would do (VERSION: default triremeadm's own)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			target := version.Version
			if len(args) == 1 {
				target = args[0]
			}
			if err := d.gather(c.Context()); err != nil {
				return err
			}
			pl, err := d.plan(target)
			if err != nil {
				return err
			}
			pl.Print(out, d.state)
			return nil
		},
	}
	plan.Flags().BoolVar(&d.force, "force", false, "Judge the skew policy as apply --force would.")
	apply := &cobra.Command{
		Use:   "apply VERSION",
		Short: "Upgrade this first control-plane node to VERSION: health and skew checks, backups, certificates, static pods",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return d.run(c.Context(), args[0], true)
		},
	}
	node := &cobra.Command{
		Use:   "node [VERSION]",
		Short: "Upgrade this node to VERSION (default: what the apiserver runs), after apply on the first control-plane node: a control-plane node's static pods and kubelet, a drained worker's kubelet",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			target := ""
			if len(args) == 1 {
				target = args[0]
			}
			return d.run(c.Context(), target, false)
		},
	}
	for _, c := range []*cobra.Command{apply, node} {
		c.Flags().BoolVar(&d.force, "force", false, "Allow what the skew policy allows only when forced (a downgrade of one minor version, kubelets newer than the target).")
		c.Flags().BoolVar(&d.renewCerts, "certificate-renewal", true, "Renew the certificates and kubeconfigs before the static pods restart, as kubeadm does.")
		c.Flags().DurationVar(&d.timeout, "timeout", restartTimeout, "How long each replaced static pod has to become healthy before this node is rolled back.")
		c.Flags().StringSliceVar(&d.skip, "skip-phases", nil, "Phases to leave out (health, backup, certs, control-plane, kubelet, addons), as kubeadm upgrade's --skip-phases.")
	}
	cmd.AddCommand(plan, apply, node)
	return cmd
}

// gather reads what runs: this node's static pods, the apiserver's version,
// the kubelets', and the images containerd holds.
func (d *upgradeData) gather(ctx context.Context) error {
	d.p = paths.Paths{Root: d.g.root}
	apiserverManifest := staticpod.Path(d.p.ManifestsDir(), staticpod.APIServer)
	if _, err := os.Stat(apiserverManifest); err != nil {
		return fmt.Errorf("not a control-plane node: no %s (on a worker, drain it and run `triremeadm upgrade node`)", apiserverManifest)
	}
	d.state = upgrade.State{StaticPods: map[string]string{}, Kubelets: map[string]string{}}
	for _, comp := range staticpod.UpgradeOrder {
		pod, err := staticpod.Read(staticpod.Path(d.p.ManifestsDir(), comp))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		d.state.StaticPods[comp] = pod.Spec.Containers[0].Image
	}
	c, err := clientFor(d.p.Kubeconfig("admin.conf"))
	if err != nil {
		return err
	}
	d.client = c
	sv, err := c.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("the apiserver's version: %w", err)
	}
	d.state.APIServer = sv.GitVersion
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		d.state.Kubelets[n.Name] = n.Status.NodeInfo.KubeletVersion
	}
	switch _, err := c.AppsV1().DaemonSets(metav1.NamespaceSystem).Get(ctx, clusterphases.ProxyName, metav1.GetOptions{}); {
	case err == nil:
		d.proxy = true
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("the proxy DaemonSet: %w", err)
	}
	if d.node, err = nodeName(d.p); err != nil {
		return err
	}
	d.held, err = images.Held(ctx, d.p.ContainerdSocket())
	if err != nil {
		return err
	}
	prefix := d.repo + "/" + staticpod.Images[staticpod.APIServer].Image + ":"
	for ref := range d.held {
		if strings.HasPrefix(ref, prefix) {
			d.state.Installable = append(d.state.Installable, strings.TrimPrefix(ref, prefix))
		}
	}
	sort.Strings(d.state.Installable)
	return nil
}

// nodeName is this node's name, as its kubelet's client certificate says.
func nodeName(p paths.Paths) (string, error) {
	cert, err := kubeconfig.ClientCert(p.Kubeconfig("kubelet.conf"))
	if err != nil {
		return "", fmt.Errorf("this node's name: %w", err)
	}
	return strings.TrimPrefix(cert.Subject.CommonName, "system:node:"), nil
}

// plan compares what runs with target; the images target needs are those of
// the static pods this node runs and the proxy's, if it is installed.
func (d *upgradeData) plan(target string) (upgrade.Plan, error) {
	var need []string
	for _, comp := range staticpod.UpgradeOrder {
		if _, ok := d.state.StaticPods[comp]; ok {
			need = append(need, d.repo+"/"+staticpod.Images[comp].Image+":"+target)
		}
	}
	if d.proxy {
		need = append(need, d.repo+"/trireme-proxy:"+target)
	}
	return upgrade.MakePlan(d.state, staticpod.UpgradeOrder, target, need, func(r string) bool { return d.held[r] }, d.force)
}

// run upgrades this node to target; first is apply's first control-plane
// node, which checks the whole cluster, and a node after which every
// control-plane node runs target upgrades the addons. A node without an
// apiserver manifest is a worker (upgrade node only).
func (d *upgradeData) run(ctx context.Context, target string, first bool) error {
	if !first {
		d.p = paths.Paths{Root: d.g.root}
		if _, err := os.Stat(staticpod.Path(d.p.ManifestsDir(), staticpod.APIServer)); errors.Is(err, os.ErrNotExist) {
			return d.runWorker(ctx, target)
		}
	}
	if err := d.gather(ctx); err != nil {
		return err
	}
	if target == "" {
		target = d.state.APIServer
	}
	pl, err := d.plan(target)
	if err != nil {
		return err
	}
	// Both refusals come before anything is touched.
	if err := pl.MissingError(); err != nil {
		return err
	}
	if first && pl.Skew != nil {
		return pl.Skew
	}
	kubeletBinary, err := d.kubeletBinary(ctx, target)
	if err != nil {
		return err
	}
	phases := []workflow.Phase{
		{Name: "health", Short: "Check the cluster's health", Run: d.health},
		{Name: "backup", Short: "Back up this node's manifests and an etcd snapshot", Run: d.backupStep},
		{Name: "certs", Short: "Renew the certificates and kubeconfigs", Run: func(_ context.Context, s *workflow.Status) error {
			if !d.renewCerts {
				s.Printf("left as they are (--certificate-renewal=false)")
				return nil
			}
			_, err := renewCertificates(d.p, d.certDir, "all", statusWriter{s})
			return err
		}},
		{Name: "control-plane", Short: "Replace the static pods one at a time", Run: func(ctx context.Context, s *workflow.Status) error {
			// A node that runs an etcd member gets what init and join give one.
			if _, err := os.Stat(staticpod.Path(d.p.ManifestsDir(), staticpod.Etcd)); err == nil {
				if err := capTCPBackoff(d.p, s); err != nil {
					return err
				}
			}
			r := &upgrade.Replacer{ManifestsDir: d.p.ManifestsDir(), BackupDir: d.backup, Repository: d.repo, Version: target,
				Health: &podHealth{socket: d.p.ContainerdSocket(), client: d.client, node: d.node, timeout: d.timeout}, Progress: s.Printf}
			return r.Replace(ctx, staticpod.UpgradeOrder)
		}},
		d.kubeletPhase(kubeletBinary, target),
		{Name: "addons", Short: "Upgrade the proxy DaemonSet and the addons release after the last control-plane node", Run: func(ctx context.Context, s *workflow.Status) error {
			return d.upgradeAddons(ctx, s, target)
		}},
	}
	if err := workflow.NewRunner(d.out).Run(ctx, phases, d.skip); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "\nThis node runs %s. Upgrade the other control-plane nodes with `triremeadm upgrade node`, "+
		"then each worker: `kubectl drain NODE --ignore-daemonsets`, `triremeadm upgrade node` there, `kubectl uncordon NODE`.\n", target)
	return nil
}

// statusWriter prints lines written to it under a phase's status line.
type statusWriter struct{ s *workflow.Status }

func (w statusWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		w.s.Printf("%s", l)
	}
	return len(b), nil
}

// health checks what kubeadm's upgrade checks first: every node Ready, every
// control-plane pod ready, every etcd member started and answering.
func (d *upgradeData) health(ctx context.Context, s *workflow.Status) error {
	var problems []string
	nodes, err := d.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		if !condition(n.Status.Conditions, corev1.NodeReady) {
			problems = append(problems, "node "+n.Name+" is not Ready")
		}
	}
	pods, err := d.client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if !podReady(&p) {
			problems = append(problems, "pod kube-system/"+p.Name+" is not ready")
		}
	}
	if _, ok := d.state.StaticPods[staticpod.Etcd]; ok {
		m, err := etcdsnapshot.LocalMember(d.p.ManifestsDir())
		if err != nil {
			return err
		}
		ec, err := etcdmember.New([]string{m.Endpoint}, d.p.In(d.certDir))
		if err != nil {
			return err
		}
		defer ec.Close()
		members, err := ec.Members(ctx)
		if err != nil {
			return fmt.Errorf("etcd members: %w", err)
		}
		for _, mb := range members {
			if mb.Name == "" {
				problems = append(problems, fmt.Sprintf("etcd member %x has not started", mb.ID))
			}
		}
		s.Printf("%d etcd member(s)", len(members))
	}
	if len(problems) > 0 {
		return fmt.Errorf("the cluster is not healthy, nothing was changed: %s", strings.Join(problems, "; "))
	}
	s.Printf("%d node(s) Ready, %d control-plane pod(s) ready", len(nodes.Items), len(pods.Items))
	return nil
}

func condition(cs []corev1.NodeCondition, t corev1.NodeConditionType) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// backupStep copies the manifests and saves an etcd snapshot beside them.
func (d *upgradeData) backupStep(ctx context.Context, s *workflow.Status) error {
	dir, err := upgrade.BackupManifests(d.p.ManifestsDir(), d.p.TmpDir(), time.Now())
	if err != nil {
		return err
	}
	d.backup = dir
	s.Printf("manifests copied to %s", dir)
	if _, ok := d.state.StaticPods[staticpod.Etcd]; !ok {
		return nil
	}
	m, err := etcdsnapshot.LocalMember(d.p.ManifestsDir())
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "etcd-snapshot.db")
	st, err := etcdsnapshot.Save(ctx, m, file)
	if err != nil {
		return err
	}
	s.Printf("etcd snapshot %s: revision %d, %d keys (`triremeadm etcd snapshot restore` brings it back)", file, st.Revision, st.Keys)
	return nil
}

// podHealth is the real HealthChecker: the runtime runs a container of the
// pod started since the manifest changed and its health endpoint answers
// (staticpod.WaitRestarted), and its mirror pod shows the new image ready.
type podHealth struct {
	socket  string
	client  kubernetes.Interface
	node    string
	timeout time.Duration
}

func (h *podHealth) WaitHealthy(ctx context.Context, pod *corev1.Pod, since time.Time) error {
	start := time.Now()
	if err := staticpod.WaitRestarted(ctx, h.socket, pod, since, h.timeout); err != nil {
		return err
	}
	name := pod.Name + "-" + h.node
	want := pod.Spec.Containers[0].Image
	for {
		// Errors are expected while etcd or the apiserver restart.
		mp, err := h.client.CoreV1().Pods(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && mp.Spec.Containers[0].Image == want && podReady(mp) {
			return nil
		}
		if time.Since(start) > h.timeout {
			return fmt.Errorf("mirror pod %s/%s does not show %s ready after %s", pod.Namespace, name, want, h.timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
