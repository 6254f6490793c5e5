package app

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/addons"
	"trireme.dev/adm/internal/cloudconfig"
	"trireme.dev/adm/internal/clusterphases"
	"trireme.dev/adm/internal/containerd"
	"trireme.dev/adm/internal/copycerts"
	"trireme.dev/adm/internal/discovery"
	"trireme.dev/adm/internal/etcdsnapshot"
	"trireme.dev/adm/internal/images"
	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/kubelet"
	"trireme.dev/adm/internal/options"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/preflight"
	"trireme.dev/adm/internal/staticpod"
	"trireme.dev/adm/internal/supervisor"
	"trireme.dev/adm/internal/tcprto"
	"trireme.dev/adm/internal/token"
	"trireme.dev/adm/internal/workflow"
	kubeletconfig "trireme.dev/api/config/kubelet"
)

// initData is the state init's phases share: the flags, and the configuration
// resolved from them on first use.
type initData struct {
	g     *global
	opts  *options.Init
	flags *pflag.FlagSet
	cfg   *options.Config
	env   options.Environment
	// tokens are the bootstrap tokens created, for the final message.
	tokens []string
	// certKey is the certificate key the upload-certs phase used, if it ran.
	certKey string
}

func (d *initData) config() (*options.Config, error) {
	if d.cfg == nil {
		cfg, err := d.opts.Resolve(d.flags, d.g.root, d.env)
		if err != nil {
			return nil, err
		}
		d.cfg = cfg
	}
	return d.cfg, nil
}

// timeouts of the phases that wait.
const (
	controlPlaneTimeout = 4 * time.Minute
	nodeTimeout         = 2 * time.Minute
	containerdTimeout   = 30 * time.Second
)

func newInitCommand(g *global, out io.Writer) *cobra.Command {
	d := &initData{g: g, opts: &options.Init{}, env: options.HostEnvironment()}
	phases := initPhases(d)
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Set up this machine as a Trireme control-plane node",
		Long: "Set up this machine as a Trireme control-plane node, running these phases in order:\n  " +
			strings.Join(describe(phases), "\n  "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d.flags = cmd.Flags()
			cfg, err := d.config()
			if err != nil {
				return err
			}
			if err := checkRestore(cfg); err != nil {
				return err
			}
			if err := workflow.NewRunner(out).Run(cmd.Context(), phases, cfg.Init.SkipPhases); err != nil {
				var pe *workflow.PhaseError
				if errors.As(err, &pe) {
					return fmt.Errorf("%w\n\nFix the cause, then run `triremeadm init` again (finished phases reuse what they wrote)"+
						" or only this phase with `triremeadm init phase %s`; `triremeadm reset` undoes what init did", err, pe.Phase)
				}
				return err
			}
			return printSuccess(out, cfg, d.tokens, d.certKey)
		},
	}
	d.opts.AddFlags(cmd.Flags())
	phaseCmd := &cobra.Command{Use: "phase", Short: "Run one phase of init alone"}
	for _, p := range phases {
		pc := &cobra.Command{
			Use:   p.Name,
			Short: p.Short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				d.flags = cmd.Flags()
				return workflow.NewRunner(out).RunOne(cmd.Context(), p)
			},
		}
		pc.Flags().AddFlagSet(cmd.Flags())
		phaseCmd.AddCommand(pc)
	}
	cmd.AddCommand(phaseCmd)
	return cmd
}

func describe(phases []workflow.Phase) []string {
	out := make([]string, len(phases))
	for i, p := range phases {
		out[i] = fmt.Sprintf("%-20s %s", p.Name, p.Short)
	}
	return out
}

func initPhases(d *initData) []workflow.Phase {
	return []workflow.Phase{
		{Name: "preflight", Short: "Check that this machine can run a Trireme node", Run: d.preflight},
		{Name: "certs", Short: "Write the cluster's certificates and keys", Run: d.certs},
		{Name: "kubeconfig", Short: "Write the kubeconfig files", Run: d.kubeconfigs},
		{Name: "container-runtime", Short: "Configure and start containerd", Run: d.containerRuntime},
		{Name: "images", Short: imagesPhaseShort, Run: d.images},
		{Name: "etcd", Short: "Write the etcd static pod manifest", Run: d.etcd},
		{Name: "control-plane", Short: "Write the control plane's static pod manifests", Run: d.controlPlane},
		{Name: "kubelet-start", Short: "Write the kubelet's configuration and start it", Run: d.kubeletStart},
		{Name: "wait-control-plane", Short: "Wait for the control plane to become healthy", Run: d.waitControlPlane},
		{Name: "upload-config", Short: "Store the ClusterConfiguration in kube-system/" + clusterphases.ConfigMapName, Run: d.uploadConfig},
		{Name: "upload-certs", Short: "With --upload-certs, store the shared certificates, encrypted, in kube-system/" + copycerts.SecretName, Run: d.uploadCerts},
		{Name: "mark-control-plane", Short: "Label (and taint) this node as a control-plane node", Run: d.markControlPlane},
		{Name: "bootstrap-token", Short: "Create bootstrap tokens and the RBAC and cluster-info nodes join with", Run: d.bootstrapToken},
		{Name: "addon", Short: "Install the proxy and the trireme-addons Helm release (its addons: charts/trireme-addons)", Run: d.addon},
	}
}

func (d *initData) preflight(_ context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	ports := []int{int(cfg.Init.LocalAPIEndpoint.BindPort), 10250, staticpod.ControllerManagerPort, staticpod.SchedulerPort}
	empty := []string{cfg.Paths.ManifestsDir()}
	if cfg.Cluster.Etcd.Local != nil {
		ports = append(ports, staticpod.EtcdClientPort, staticpod.EtcdPeerPort)
		empty = append(empty, cfg.EtcdDataDir())
	}
	r := preflight.Run(preflight.Checks(preflight.RealHost(), preflight.Inputs{
		Ports: ports, EmptyDirs: empty, CNIBinDir: paths.CNIBinDir, Root: cfg.Paths.Root,
		KubeletDir: cfg.Paths.KubeletDir(), ContainerdRoot: cfg.Paths.ContainerdRoot(), EvictionHard: evictionHard(cfg),
	}),
		cfg.Init.NodeRegistration.IgnorePreflightErrors)
	for _, w := range r.Warnings {
		s.Printf("%s", w)
	}
	return r.Err()
}

// evictionHard is the evictionHard the node's kubelet will run with: the
// configuration file's, or the kubelet's defaults.
func evictionHard(cfg *options.Config) map[string]string {
	if cfg.Kubelet != nil && cfg.Kubelet.EvictionHard != nil {
		return cfg.Kubelet.EvictionHard
	}
	return kubeletconfig.Default().EvictionHard
}

func (d *initData) certs(_ context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return writeCerts(cfg, s)
}

func writeCerts(cfg *options.Config, s *workflow.Status) error {
	specs, err := pki.Specs(cfg.CertInputs())
	if err != nil {
		return err
	}
	dir := cfg.PKIDir()
	now := time.Now()
	for _, spec := range specs {
		action, err := pki.Ensure(dir, spec, now)
		if err != nil {
			return err
		}
		s.Printf("%s %s", action, spec.Name)
	}
	action, err := pki.EnsureServiceAccountKey(dir)
	if err != nil {
		return fmt.Errorf("service account key: %w", err)
	}
	s.Printf("%s sa.key, sa.pub", action)
	s.Printf("in %s", dir)
	return nil
}

func (d *initData) kubeconfigs(_ context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return writeKubeconfigs(cfg, s)
}

func writeKubeconfigs(cfg *options.Config, s *workflow.Status) error {
	ca, err := pki.Load(cfg.PKIDir(), pki.CA)
	if err != nil {
		return fmt.Errorf("cluster CA (run the certs phase first): %w", err)
	}
	now := time.Now()
	for _, spec := range kubeconfig.Specs(cfg.KubeconfigInputs()) {
		path := cfg.Paths.Kubeconfig(spec.File)
		action, err := kubeconfig.Ensure(path, cfg.Cluster.ClusterName, spec, ca, now)
		if err != nil {
			return err
		}
		s.Printf("%s %s", action, path)
	}
	return nil
}

func (d *initData) containerRuntime(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return startContainerd(ctx, cfg, s)
}

// imagesPhaseShort describes the images phase of init and join.
const imagesPhaseShort = "Check that containerd holds the images this node's pods start from, pulling those it lacks"

func (d *initData) images(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return ensureImages(ctx, cfg, true, s)
}

// ensureImages checks that containerd holds the images of what triremeadm
// starts on this node, pulling those it lacks: every pod's sandbox (pause)
// and, on a control-plane node, its static pods. The addons' images (proxy,
// CoreDNS, flannel) are the kubelet's to pull, with their errors on the pods.
func ensureImages(ctx context.Context, cfg *options.Config, controlPlane bool, s *workflow.Status) error {
	refs := []string{cfg.Image("pause")}
	if controlPlane {
		components := controlPlaneComponents(cfg)
		if cfg.Cluster.Etcd.External == nil {
			components = append(slices.Clone(components), staticpod.Etcd)
		}
		for _, c := range components {
			refs = append(refs, cfg.Image(staticpod.Images[c].Image))
		}
	}
	if err := images.Ensure(ctx, cfg.Paths.ContainerdSocket(), refs, s.Progress); err != nil {
		return err
	}
	s.Printf("containerd holds %s", strings.Join(refs, ", "))
	return nil
}

// flannelMasquerades says whether the flannel addon will masquerade what
// leaves the pod network, so that the bridge of containerd's template need
// not: it is enabled in the values and init installs the addons. An init
// that skips the addon phase leaves masquerading to the bridge. A join
// follows the cluster's values, as the cluster's ConfigMap holds them; it
// cannot tell that init skipped the addon phase.
func flannelMasquerades(cfg *options.Config) bool {
	skipped := cfg.Init != nil && slices.Contains(cfg.Init.SkipPhases, "addon")
	return addons.Enabled(cfg.Cluster.Addons.Values, "flannel") && !skipped
}

func startContainerd(ctx context.Context, cfg *options.Config, s *workflow.Status) error {
	p := cfg.Paths
	restrict, err := containerd.HostDeniesLoweringOOMScore(ctx)
	if err != nil {
		return err
	}
	if restrict {
		s.Printf("this host refuses to lower OOM scores: restrict_oom_score_adj = true")
	}
	conf, err := containerd.Render(containerd.Config{
		Root: p.ContainerdRoot(), State: p.ContainerdState(), Socket: p.ContainerdSocket(), OptDir: p.In("/opt/containerd"),
		SandboxImage: cfg.Image("pause"), RestrictOOMScoreAdj: restrict,
		CNIBinDir: paths.CNIBinDir, CNIConfDir: p.CNIConfDir(), CNITemplate: p.CNITemplate(),
		RegistryHostsDir: p.RegistryHostsDir(),
	})
	if err != nil {
		return err
	}
	if err := pki.WriteFile(p.ContainerdConfig(), conf, 0o644); err != nil {
		return err
	}
	if err := pki.WriteFile(p.CNITemplate(), containerd.CNITemplate(p.PodNetworkDataDir(), !flannelMasquerades(cfg)), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(p.CNIConfDir(), 0o755); err != nil {
		return err
	}
	s.Printf("wrote %s and %s", p.ContainerdConfig(), p.CNITemplate())
	pidFile := p.PIDFile("containerd")
	if pid, ok := supervisor.Running(pidFile); ok {
		s.Printf("containerd already supervised by PID %d; restart it to apply a changed config (triremeadm reset)", pid)
		return containerd.WaitReady(ctx, p.ContainerdSocket(), containerdTimeout)
	}
	if c, err := net.Dial("unix", p.ContainerdSocket()); err == nil {
		c.Close()
		return fmt.Errorf("a containerd that triremeadm did not start already serves %s; stop it, or restart it with --config %s and skip this phase",
			p.ContainerdSocket(), p.ContainerdConfig())
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pid, err := supervisor.Start(self, supervisor.Spec{
		Name: "containerd", PIDFile: pidFile, LogFile: p.LogFile("containerd"),
		Command: []string{"containerd", "--config", p.ContainerdConfig()},
	}, supervisorStartTimeout)
	if err != nil {
		return err
	}
	s.Printf("started containerd under supervisor PID %d (%s), logs in %s", pid, pidFile, p.LogFile("containerd"))
	return containerd.WaitReady(ctx, p.ContainerdSocket(), containerdTimeout)
}

func (d *initData) etcd(_ context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	if cfg.Cluster.Etcd.External != nil {
		s.Printf("etcd is external (%s): nothing to run", strings.Join(cfg.Cluster.Etcd.External.Endpoints, ","))
		return nil
	}
	path, err := staticpod.Write(cfg, staticpod.Etcd)
	if err != nil {
		return err
	}
	if cfg.EtcdRestore != "" {
		if err := restoreEtcd(cfg, s); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(cfg.EtcdDataDir(), 0o700); err != nil {
		return err
	}
	s.Printf("wrote %s", path)
	if err := capTCPBackoff(cfg.Paths, s); err != nil {
		return err
	}
	return writeEtcdSnapshot(cfg, s)
}

// capTCPBackoff caps TCP's retransmission backoff on a node that runs an
// etcd member (package tcprto says why).
func capTCPBackoff(p paths.Paths, s *workflow.Status) error {
	h, ok := tcprto.ForRoot(p.Root)
	if !ok {
		s.Printf("left %s alone: --root-dir on the machine's own network namespace", tcprto.Name)
		return nil
	}
	r, found, err := h.Cap()
	if err != nil {
		return err
	}
	s.Printf("%s", tcprto.Describe(r, found, h.ConfFile))
	return nil
}

// checkRestore refuses, before anything is changed, an --etcd-restore that
// cannot be carried out: a snapshot that fails its hash check, an external
// etcd, a skipped etcd phase.
func checkRestore(cfg *options.Config) error {
	if cfg.EtcdRestore == "" {
		return nil
	}
	switch {
	case cfg.Cluster.Etcd.External != nil:
		return errors.New("--etcd-restore restores the local etcd member, and this cluster's etcd is external: restore that etcd cluster itself")
	case slices.Contains(cfg.Init.SkipPhases, "etcd"):
		return errors.New("--etcd-restore needs the etcd phase, which --skip-phases leaves out")
	}
	if err := etcdsnapshot.Verify(cfg.EtcdRestore); err != nil {
		return fmt.Errorf("refusing --etcd-restore, nothing was changed: %w", err)
	}
	return nil
}

// restoreEtcd builds the local member's data directory from the snapshot
// --etcd-restore names: a cluster of this one member, with the snapshot's
// keys at a revision bumped past every one a client saw.
func restoreEtcd(cfg *options.Config, s *workflow.Status) error {
	m, err := etcdsnapshot.LocalMember(cfg.Paths.ManifestsDir())
	if err != nil {
		return err
	}
	dir := cfg.EtcdDataDir()
	if err := etcdsnapshot.RestoreInto(cfg.EtcdRestore, dir, m); err != nil {
		return err
	}
	st, err := etcdsnapshot.Read(cfg.EtcdRestore)
	if err != nil {
		return err
	}
	s.Printf("restored %s into %s: member %s alone (%s), %d keys of revision %d", cfg.EtcdRestore, dir, m.Name, m.PeerURL, st.Keys, st.Revision)
	return nil
}

// writeEtcdSnapshot writes the etcd-snapshot static pod when snapshots are
// scheduled, and removes an earlier one when they are not.
func writeEtcdSnapshot(cfg *options.Config, s *workflow.Status) error {
	sn, ok := cfg.EtcdSnapshots()
	if !ok {
		err := os.Remove(staticpod.Path(cfg.Paths.ManifestsDir(), staticpod.EtcdSnapshot))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	path, err := staticpod.Write(cfg, staticpod.EtcdSnapshot)
	if err != nil {
		return err
	}
	s.Printf("wrote %s (a snapshot every %s into %s, the newest %d kept)", path, sn.Interval.Duration, cfg.Paths.In(sn.Dir), *sn.Retention)
	return nil
}

func (d *initData) controlPlane(_ context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return writeControlPlane(cfg, s)
}

// controlPlaneComponents are the static pods of the control-plane phase:
// the control plane, the virtual-IP manager when there is a virtual IP,
// and the cloud-controller-manager with an external cloud provider.
func controlPlaneComponents(cfg *options.Config) []string {
	components := slices.Clone(staticpod.ControlPlane)
	if cfg.Cluster.VirtualIP != nil {
		components = append(components, staticpod.VIPManager)
	}
	if cfg.ExternalCloudProvider() {
		components = append(components, staticpod.CloudControllerManager)
	}
	return components
}

func writeControlPlane(cfg *options.Config, s *workflow.Status) error {
	if cfg.ExternalCloudProvider() {
		path, wrote, err := cloudconfig.WriteDefault(cfg.Paths.In(cfg.Cluster.CloudControllerManager.CloudConfig))
		if err != nil {
			return err
		}
		if wrote {
			s.Printf("wrote %s (no machines, no address pools: edit it, the controller re-reads it)", path)
		}
	}
	for _, c := range controlPlaneComponents(cfg) {
		path, err := staticpod.Write(cfg, c)
		if err != nil {
			return err
		}
		s.Printf("wrote %s", path)
	}
	return nil
}

func (d *initData) kubeletStart(_ context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return startKubelet(cfg, s)
}

func (d *initData) waitControlPlane(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	return waitControlPlane(ctx, cfg, s)
}

func waitControlPlane(ctx context.Context, cfg *options.Config, s *workflow.Status) error {
	ca, err := pki.Load(cfg.PKIDir(), pki.CA)
	if err != nil {
		return err
	}
	endpoints := []clusterphases.Endpoint{
		{Name: "kube-apiserver", URL: cfg.LocalURL() + "/livez", CA: ca.Cert},
		{Name: "kube-controller-manager", URL: "https://127.0.0.1:" + strconv.Itoa(staticpod.ControllerManagerPort) + "/healthz"},
		{Name: "kube-scheduler", URL: "https://127.0.0.1:" + strconv.Itoa(staticpod.SchedulerPort) + "/livez"},
	}
	// The cloud-controller-manager is not waited for here: it cannot
	// start before upload-config grants it its RBAC, which waits for it.
	return waitHealthy(ctx, s, "control plane", endpoints)
}

// waitHealthy waits for endpoints with progress, then says how long what
// they serve took to become healthy.
func waitHealthy(ctx context.Context, s *workflow.Status, what string, endpoints []clusterphases.Endpoint) error {
	start := time.Now()
	err := clusterphases.WaitHealthy(ctx, endpoints, controlPlaneTimeout, func(waiting []string) {
		s.Progress("waiting for %s (%s)", strings.Join(waiting, ", "), time.Since(start).Round(time.Second))
	})
	if err == nil {
		s.Printf("%s healthy after %s", what, time.Since(start).Round(100*time.Millisecond))
	}
	return err
}

// clients returns a clientset for admin.conf, first binding admin.conf's group to
// cluster-admin with super-admin.conf (kubeadm's order).
func (d *initData) client(ctx context.Context) (kubernetes.Interface, error) {
	cfg, err := d.config()
	if err != nil {
		return nil, err
	}
	// This node's own apiserver: the control-plane endpoint may be a virtual IP
	// that no node holds before the upload-config phase lets the managers elect.
	super, err := clientAt(cfg.Paths.Kubeconfig("super-admin.conf"), cfg.LocalURL())
	if err != nil {
		return nil, err
	}
	if err := clusterphases.EnsureAdminBinding(ctx, super); err != nil {
		return nil, err
	}
	return clientAt(cfg.Paths.Kubeconfig("admin.conf"), cfg.LocalURL())
}

func clientFor(path string) (kubernetes.Interface, error) {
	return clientAt(path, "")
}

// clientAt is clientFor talking to server instead of the kubeconfig's, unless
// server is empty.
func clientAt(path, server string) (kubernetes.Interface, error) {
	rc, err := restConfigAt(path, server)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
}

// restConfigAt is the client configuration of kubeconfig path, talking to
// server instead of the kubeconfig's unless server is empty.
func restConfigAt(path, server string) (*rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if server != "" {
		rc.Host = server
	}
	return rc, nil
}

func (d *initData) uploadConfig(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	c, err := d.client(ctx)
	if err != nil {
		return err
	}
	if err := clusterphases.UploadConfig(ctx, c, cfg.Cluster); err != nil {
		return err
	}
	s.Printf("stored kube-system/%s", clusterphases.ConfigMapName)
	if cfg.Cluster.VirtualIP != nil {
		// Before the virtual IP exists nothing else reaches the cluster: the
		// managers need their Lease first.
		if err := clusterphases.VIPManagerRBAC(ctx, c, kubeconfig.VIPManagerUser); err != nil {
			return err
		}
		s.Printf("let %s hold the kube-system Leases of the virtual IP", kubeconfig.VIPManagerUser)
	}
	if cfg.ExternalCloudProvider() {
		if err := clusterphases.CloudControllerManagerRBAC(ctx, c, kubeconfig.CloudControllerManagerUser); err != nil {
			return err
		}
		s.Printf("bound %s to %s", clusterphases.CloudControllerManagerRole, kubeconfig.CloudControllerManagerUser)
		// It exited at start without that RBAC; the kubelet restarts it
		// with back-off.
		return waitHealthy(ctx, s, "cloud-controller-manager", []clusterphases.Endpoint{{Name: "cloud-controller-manager",
			URL: "https://127.0.0.1:" + strconv.Itoa(staticpod.CloudControllerManagerPort) + "/healthz"}})
	}
	return nil
}

func (d *initData) uploadCerts(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	if !cfg.UploadCerts {
		s.Printf("skipped: --upload-certs is not set")
		return nil
	}
	key := cfg.Init.CertificateKey
	if key == "" {
		if key, err = copycerts.CreateKey(); err != nil {
			return err
		}
	}
	c, err := d.client(ctx)
	if err != nil {
		return err
	}
	if err := copycerts.Upload(ctx, c, cfg.PKIDir(), key, cfg.Cluster.Etcd.External != nil, tokenGroups(cfg), time.Now()); err != nil {
		return err
	}
	d.certKey = key
	s.Printf("stored kube-system/%s, valid for %s; certificate key:", copycerts.SecretName, copycerts.TTL)
	s.Printf("%s", key)
	return nil
}

// tokenGroups are the groups of the bootstrap tokens init creates.
func tokenGroups(cfg *options.Config) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range cfg.Init.BootstrapTokens {
		for _, g := range t.Groups {
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	if len(out) == 0 {
		out = []string{v1alpha1.DefaultNodeBootstrapGroup}
	}
	return out
}

func (d *initData) markControlPlane(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	c, err := d.client(ctx)
	if err != nil {
		return err
	}
	var taints []corev1.Taint
	switch {
	case cfg.Init.NodeRegistration.Taints != nil:
		for _, t := range cfg.Init.NodeRegistration.Taints {
			taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
	case !cfg.SingleNode:
		taints = []corev1.Taint{{Key: clusterphases.ControlPlaneLabel, Effect: corev1.TaintEffectNoSchedule}}
	}
	if err := clusterphases.MarkControlPlane(ctx, c, cfg.NodeName(), taints, nodeTimeout); err != nil {
		return err
	}
	s.Printf("labelled node %s %s, %d taint(s)", cfg.NodeName(), clusterphases.ControlPlaneLabel, len(taints))
	return nil
}

func (d *initData) bootstrapToken(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	c, err := d.client(ctx)
	if err != nil {
		return err
	}
	groups := map[string]bool{}
	var groupList []string
	for i := range cfg.Init.BootstrapTokens {
		t := &cfg.Init.BootstrapTokens[i]
		if err := token.Create(ctx, c, t, time.Now()); err != nil {
			return err
		}
		d.tokens = append(d.tokens, t.Token)
		s.Printf("created bootstrap token %s", t.Token)
		for _, g := range t.Groups {
			if !groups[g] {
				groups[g] = true
				groupList = append(groupList, g)
			}
		}
	}
	if len(groupList) == 0 {
		groupList = []string{"system:bootstrappers:kubeadm:default-node-token"}
	}
	if err := clusterphases.BootstrapRBAC(ctx, c, groupList); err != nil {
		return err
	}
	ca, err := pki.Load(cfg.PKIDir(), pki.CA)
	if err != nil {
		return err
	}
	if err := clusterphases.ClusterInfo(ctx, c, cfg.Cluster.ClusterName, cfg.ControlPlaneURL(), pki.EncodeCert(ca.Cert)); err != nil {
		return err
	}
	s.Printf("published kube-public/cluster-info and the RBAC for joining nodes")
	return nil
}

func (d *initData) addon(ctx context.Context, s *workflow.Status) error {
	cfg, err := d.config()
	if err != nil {
		return err
	}
	c, err := d.client(ctx)
	if err != nil {
		return err
	}
	in := clusterphases.ProxyInputs{Image: cfg.Image("trireme-proxy"), Server: cfg.ControlPlaneURL(),
		ClusterCIDR: cfg.Cluster.Networking.PodSubnet, Mode: "nftables"}
	if err := clusterphases.ProxyAddon(ctx, c, in); err != nil {
		return err
	}
	s.Printf("installed the proxy DaemonSet kube-system/%s (%s, mode %s)", clusterphases.ProxyName, in.Image, in.Mode)
	return d.addonChart(ctx, s, cfg, c)
}

// addonWaitTimeout bounds the wait for the addons to be ready; an addon not
// ready by then is reported, and init still succeeds.
const addonWaitTimeout = 3 * time.Minute

// addonChart installs (or upgrades) the trireme-addons release and waits for
// each addon, printing how long each took or why it is not ready.
func (d *initData) addonChart(ctx context.Context, s *workflow.Status, cfg *options.Config, c kubernetes.Interface) error {
	dnsIP, err := kubelet.DNSIP(cfg.Cluster.Networking.ServiceSubnet)
	if err != nil {
		return err
	}
	admin := cfg.Paths.Kubeconfig("admin.conf")
	rc, err := restConfigAt(admin, cfg.LocalURL())
	if err != nil {
		return err
	}
	meta, err := metadata.NewForConfig(rc)
	if err != nil {
		return err
	}
	adopted, err := addons.Adopt(ctx, meta)
	if err != nil {
		return err
	}
	if len(adopted) > 0 {
		s.Printf("adopted into release %s: %s", addons.ReleaseName, strings.Join(adopted, ", "))
	}
	ch, err := addons.Chart(cfg.Cluster.KubernetesVersion)
	if err != nil {
		return err
	}
	vals := addons.Values(addons.Inputs{
		ImageRegistry: cfg.Cluster.ImageRepository, ImageTag: cfg.Cluster.KubernetesVersion,
		ClusterDomain: cfg.Cluster.Networking.DNSDomain, DNSServiceIP: dnsIP,
		PodSubnet: cfg.Cluster.Networking.PodSubnet, ServiceSubnet: cfg.Cluster.Networking.ServiceSubnet,
		SingleNode: cfg.SingleNode, User: cfg.Cluster.Addons.Values,
		LocalPathDir: rootedLocalPathDir(cfg.Paths), FlannelPaths: rootedFlannelPaths(cfg.Paths),
		LoadBalancerAnnouncer: cfg.ExternalCloudProvider(),
	})
	getter := genericclioptions.NewConfigFlags(false)
	server, ns := cfg.LocalURL(), addons.Namespace
	getter.KubeConfig, getter.APIServer, getter.Namespace = &admin, &server, &ns
	hc, err := addons.NewClient(getter, logr.FromContextOrDiscard(ctx).WithName("helm"))
	if err != nil {
		return err
	}
	start := time.Now()
	rel, err := hc.Apply(ctx, ch, vals)
	if err != nil {
		return err
	}
	s.Printf("release %s/%s revision %d (chart %s, %s)", rel.Namespace, rel.Name, rel.Version, rel.Chart.Metadata.Name, rel.Chart.Metadata.AppVersion)
	reportAddons(s, addons.Wait(ctx, c, addons.Workloads(rel.Manifest), addonWaitTimeout))
	s.Printf("installed and checked in %s", time.Since(start).Round(100*time.Millisecond))
	return nil
}

// reportAddons prints how long each addon took to be ready, or why it is not.
func reportAddons(s *workflow.Status, results []addons.Result) {
	for _, r := range results {
		if r.Err != nil {
			s.Printf("addon %s is NOT ready after %s: %v", r.Addon, r.Took.Round(100*time.Millisecond), r.Err)
			continue
		}
		s.Printf("addon %s ready in %s", r.Addon, r.Took.Round(100*time.Millisecond))
	}
}

// rootedLocalPathDir is the node's local-path directory when triremeadm works
// below a --root-dir, and empty (the chart's default) on the real machine.
func rootedLocalPathDir(p paths.Paths) string {
	if !rooted(p) {
		return ""
	}
	return p.LocalPathDir()
}

// rootedFlannelPaths are the node's flannel directories when triremeadm works
// below a --root-dir (where its containerd reads CNI configurations and reset
// looks), and nil (the chart's defaults) on the real machine.
func rootedFlannelPaths(p paths.Paths) *addons.FlannelPaths {
	if !rooted(p) {
		return nil
	}
	return &addons.FlannelPaths{CNIConfDir: p.CNIConfDir(), CNIDataDir: p.PodNetworkDataDir(), RunDir: p.FlannelRunDir()}
}

// rooted reports whether triremeadm works below a --root-dir.
func rooted(p paths.Paths) bool { return p.Root != "" && p.Root != "/" }

// CAHash is the --discovery-token-ca-cert-hash of a CA certificate.
func CAHash(ca *x509.Certificate) string { return discovery.CAHash(ca) }

func printSuccess(out io.Writer, cfg *options.Config, tokens []string, certKey string) error {
	ca, err := pki.Load(cfg.PKIDir(), pki.CA)
	if err != nil {
		return err
	}
	admin := cfg.Paths.Kubeconfig("admin.conf")
	fmt.Fprintf(out, "\nYour Trireme control plane has initialized successfully!\n\nTo use it:\n\n  export KUBECONFIG=%s\n  kubectl get nodes\n\n", admin)
	if len(tokens) == 0 {
		return errors.New("no bootstrap token was created, so there is no join command to print")
	}
	endpoint := strings.TrimPrefix(cfg.ControlPlaneURL(), "https://")
	if certKey != "" {
		fmt.Fprintf(out, "Join control-plane nodes by running, as root on each:\n\n  triremeadm join %s --token %s \\\n    --discovery-token-ca-cert-hash %s \\\n    --control-plane --certificate-key %s\n\n",
			endpoint, tokens[0], CAHash(ca.Cert), certKey)
		fmt.Fprintf(out, "The certificate key decrypts kube-system/%s, which is deleted after %s;"+
			" `triremeadm init phase upload-certs --upload-certs` uploads them again with a new key.\n\n", copycerts.SecretName, copycerts.TTL)
	}
	fmt.Fprintf(out, "Join worker nodes by running, as root on each:\n\n  triremeadm join %s --token %s \\\n    --discovery-token-ca-cert-hash %s\n", endpoint, tokens[0], CAHash(ca.Cert))
	return nil
}

// findBinary looks for a Trireme executable beside triremeadm (as `make build` lays
// them out in _output/bin), then in PATH.
func findBinary(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is neither beside triremeadm nor in PATH (build it with `make build`)", name)
	}
	return p, nil
}
