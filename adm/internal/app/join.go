package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/clusterphases"
	"trireme.dev/adm/internal/discovery"
	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/options"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/workflow"
)

// BootstrapKubeconfig is the kubelet's bootstrap kubeconfig (the token's
// credentials) that join writes, as kubeadm's bootstrap-kubelet.conf.
const BootstrapKubeconfig = "bootstrap-kubelet.conf"

// joinData is the state join's phases share.
type joinData struct {
	g                  *global
	endpoint           string
	token              string
	hashes             []string
	skipCAVerification bool
	nodeName, nodeIP   string
	// zone and region label the node for the cloud-controller-manager and
	// topology spreading.
	zone, region string
	configFile   string
	timeout      time.Duration
	// controlPlane makes a control-plane node; certificateKey decrypts the
	// shared certificates; advertiseAddress and bindPort are its apiserver's.
	controlPlane     bool
	certificateKey   string
	advertiseAddress string
	bindPort         int32
	// kubeletConfig is --config's KubeletConfiguration, if any.
	kubeletConfig *kubeletv1beta1.KubeletConfiguration

	found     *discovery.Result
	bootstrap *clientcmdapi.Config
	cfg       *options.Config
}

func newJoinCommand(g *global, out io.Writer) *cobra.Command {
	d := &joinData{g: g}
	cmd := &cobra.Command{
		Use:   "join <host:port>",
		Short: "Join this machine to a cluster as a worker or (--control-plane) a control-plane node",
		Long: "Join this machine to a cluster as a worker node: discover the cluster through kube-public/cluster-info " +
			"(signed for the token, its CA pinned by --discovery-token-ca-cert-hash), start containerd, and start the " +
			"kubelet, which gets its client certificate through a CSR (TLS bootstrap). With --control-plane, it also downloads " +
			"the shared certificates init uploaded (--certificate-key), adds an etcd member and runs the control plane's static pods.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d.endpoint = args[0]
			if err := d.readConfigFile(cmd); err != nil {
				return err
			}
			if d.token == "" {
				return errors.New("--token is required")
			}
			if d.controlPlane {
				if err := checkCertificateKey(d.certificateKey); err != nil {
					return err
				}
			}
			phases := []workflow.Phase{
				{Name: "preflight", Short: "Check that this machine can join", Run: d.preflight},
				{Name: "discovery", Short: "Find and trust the cluster through kube-public/cluster-info", Run: d.discover},
				{Name: "container-runtime", Short: "Configure and start containerd", Run: d.containerRuntime},
				{Name: "images", Short: imagesPhaseShort, Run: d.images},
				{Name: "kubelet-start", Short: "Write the kubelet's configuration and bootstrap kubeconfig and start it", Run: d.kubeletStart},
				{Name: "kubelet-tls-bootstrap", Short: "Wait for the kubelet's client certificate and its Node", Run: d.waitBootstrap},
			}
			role := "a worker"
			if d.controlPlane {
				phases, role = d.controlPlanePhases(), "a control-plane node"
			}
			if err := workflow.NewRunner(out).Run(cmd.Context(), phases, nil); err != nil {
				return fmt.Errorf("%w\n\n`triremeadm reset` undoes what join did", err)
			}
			fmt.Fprintf(out, "\nThis node has joined the cluster as %s, %s. See it with `kubectl get nodes` on the control plane.\n", role, d.cfg.NodeName())
			if d.controlPlane {
				fmt.Fprintf(out, "\nTo use the cluster from this node:\n\n  export KUBECONFIG=%s\n  kubectl get nodes\n", d.cfg.Paths.Kubeconfig("admin.conf"))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&d.token, "token", "", "The bootstrap token (for discovery and the kubelet's TLS bootstrap).")
	fs.StringSliceVar(&d.hashes, "discovery-token-ca-cert-hash", nil, "Pins the cluster CA: sha256:<hex of its SubjectPublicKeyInfo>, as init prints it.")
	fs.BoolVar(&d.skipCAVerification, "discovery-token-unsafe-skip-ca-verification", false, "Trust whichever CA cluster-info names.")
	fs.StringVar(&d.nodeName, "node-name", "", "The node's name; default the host name.")
	fs.StringVar(&d.nodeIP, "node-ip", "", "The node's InternalIP; default the address of the default route's interface.")
	fs.StringVar(&d.zone, "zone", "", "The node's zone: its topology.kubernetes.io/zone label (a cloud-controller-manager's inventory may override it).")
	fs.StringVar(&d.region, "region", "", "The node's region: its topology.kubernetes.io/region label.")
	fs.StringVar(&d.configFile, "config", "", "A file with a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) the kubelet's configuration starts from.")
	fs.DurationVar(&d.timeout, "discovery-timeout", 5*time.Minute, "How long discovery may take.")
	fs.BoolVar(&d.controlPlane, "control-plane", false, "Make this node a control-plane node (an etcd member and the control plane's static pods).")
	fs.StringVar(&d.certificateKey, "certificate-key", "", "The key init printed, which decrypts the shared certificates in kube-system/kubeadm-certs.")
	fs.StringVar(&d.advertiseAddress, "apiserver-advertise-address", "", "With --control-plane, the IP this node's apiserver advertises; default the node IP.")
	fs.Int32Var(&d.bindPort, "apiserver-bind-port", v1alpha1.DefaultAPIBindPort, "With --control-plane, the port this node's apiserver listens on.")
	return cmd
}

func (d *joinData) preflight(_ context.Context, s *workflow.Status) error {
	for flag, v := range map[string]string{"zone": d.zone, "region": d.region} {
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return fmt.Errorf("--%s=%q: %s", flag, v, strings.Join(msgs, "; "))
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("join must run as root")
	}
	p := paths.Paths{Root: d.g.root}
	if _, err := os.Stat(p.Kubeconfig("kubelet.conf")); err == nil {
		return fmt.Errorf("%s exists: this machine is a node already (triremeadm reset first)", p.Kubeconfig("kubelet.conf"))
	}
	if d.nodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return err
		}
		d.nodeName = strings.ToLower(h)
	}
	if d.nodeIP == "" {
		ip, err := options.DefaultRouteAddress()
		if err != nil {
			return fmt.Errorf("node IP (set --node-ip): %w", err)
		}
		d.nodeIP = ip.String()
	}
	s.Printf("node %s at %s", d.nodeName, d.nodeIP)
	return nil
}

func (d *joinData) discover(ctx context.Context, s *workflow.Status) error {
	found, err := discovery.Discover(ctx, d.endpoint, d.token, d.hashes, d.skipCAVerification, d.timeout)
	if err != nil {
		return err
	}
	d.found = found
	s.Printf("cluster-info signed for the token, CA %s, apiserver %s", discovery.CAHash(found.CA), found.Server)
	bootstrap := kubeconfig.New("trireme", found.Server, found.CAPEM, "tls-bootstrap-token-user", nil, nil)
	bootstrap.AuthInfos["tls-bootstrap-token-user"].Token = d.token
	d.bootstrap = bootstrap
	c, err := clientFromConfig(bootstrap)
	if err != nil {
		return err
	}
	cluster := &v1alpha1.ClusterConfiguration{}
	cm, err := c.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, clusterphases.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read kube-system/%s with the token: %w", clusterphases.ConfigMapName, err)
	}
	if err := yaml.Unmarshal([]byte(cm.Data[clusterphases.ConfigMapKey]), cluster); err != nil {
		return fmt.Errorf("kube-system/%s: %w", clusterphases.ConfigMapName, err)
	}
	v1alpha1.SetDefaultsClusterConfiguration(cluster)
	init := &v1alpha1.InitConfiguration{}
	init.NodeRegistration.Name = d.nodeName
	init.LocalAPIEndpoint.AdvertiseAddress = d.nodeIP
	init.LocalAPIEndpoint.BindPort = d.bindPort
	if d.controlPlane && d.advertiseAddress != "" {
		init.LocalAPIEndpoint.AdvertiseAddress = d.advertiseAddress
	}
	d.cfg = &options.Config{Init: init, Cluster: cluster, Paths: paths.Paths{Root: d.g.root}}
	d.cfg.Kubelet = d.kubeletConfig
	if err := pki.WriteFile(d.cfg.Paths.In(cluster.CertificatesDir+"/ca.crt"), found.CAPEM, 0o644); err != nil {
		return err
	}
	data, err := clientcmd.Write(*bootstrap)
	if err != nil {
		return err
	}
	path := d.cfg.Paths.Kubeconfig(BootstrapKubeconfig)
	if err := pki.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	s.Printf("wrote the cluster CA and %s", path)
	return nil
}

func clientFromConfig(cfg *clientcmdapi.Config) (kubernetes.Interface, error) {
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
}

func (d *joinData) containerRuntime(ctx context.Context, s *workflow.Status) error {
	return startContainerd(ctx, d.cfg, s)
}

func (d *joinData) images(ctx context.Context, s *workflow.Status) error {
	return ensureImages(ctx, d.cfg, d.controlPlane, s)
}

func (d *joinData) kubeletStart(_ context.Context, s *workflow.Status) error {
	// A worker runs no static pods of triremeadm's, but the kubelet watches the
	// directory as on every node.
	if err := os.MkdirAll(d.cfg.Paths.ManifestsDir(), 0o755); err != nil {
		return err
	}
	var args []string
	if labels := topologyLabels(d.zone, d.region); labels != "" {
		args = append(args, "--node-labels="+labels)
	}
	if !d.controlPlane {
		// A control-plane node's kubelet.conf holds its client certificate already.
		args = append(args, "--bootstrap-kubeconfig="+d.cfg.Paths.Kubeconfig(BootstrapKubeconfig))
	}
	return startKubelet(d.cfg, s, args...)
}

// topologyLabels is the kubelet's --node-labels for join's --zone and
// --region; empty when neither is given.
func topologyLabels(zone, region string) string {
	var l []string
	if zone != "" {
		l = append(l, corev1.LabelTopologyZone+"="+zone)
	}
	if region != "" {
		l = append(l, corev1.LabelTopologyRegion+"="+region)
	}
	return strings.Join(l, ",")
}

func (d *joinData) waitBootstrap(ctx context.Context, s *workflow.Status) error {
	path := d.cfg.Paths.Kubeconfig("kubelet.conf")
	start := time.Now()
	deadline := start.Add(nodeTimeout)
	for {
		if rc, err := clientcmd.BuildConfigFromFlags("", path); err == nil {
			if c, err := kubernetes.NewForConfig(rc); err == nil {
				if _, err := c.CoreV1().Nodes().Get(ctx, d.cfg.NodeName(), metav1.GetOptions{}); err == nil {
					s.Printf("the kubelet has its client certificate (%s) and Node %s registered after %s", path, d.cfg.NodeName(), time.Since(start).Round(100*time.Millisecond))
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the kubelet did not bootstrap within %s; see %s", nodeTimeout, d.cfg.Paths.LogFile("kubelet"))
		}
		s.Progress("waiting for the kubelet's TLS bootstrap (%s)", time.Since(start).Round(time.Second))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// readConfigFile reads --config: a KubeletConfiguration the kubelet's starts
// from, and a JoinConfiguration whose fields the flags the user set override.
func (d *joinData) readConfigFile(cmd *cobra.Command) error {
	if d.configFile == "" {
		return nil
	}
	docs, err := options.LoadConfig(d.configFile)
	if err != nil {
		return err
	}
	d.kubeletConfig = docs.Kubelet
	// An InitConfiguration or ClusterConfiguration beside it is ignored: the
	// cluster's comes from kube-system, and one file may serve init and join.
	j := docs.Join
	if j == nil {
		return nil
	}
	v1alpha1.SetDefaultsJoinConfiguration(j)
	if b := j.Discovery.BootstrapToken; b != nil && b.APIServerEndpoint == "" {
		// The endpoint is join's argument.
		b.APIServerEndpoint = d.endpoint
	}
	if err := v1alpha1.ValidateJoinConfiguration(j).ToAggregate(); err != nil {
		return fmt.Errorf("%s: %w", d.configFile, err)
	}
	set := cmd.Flags().Changed
	if !set("node-name") && j.NodeRegistration.Name != "" {
		d.nodeName = j.NodeRegistration.Name
	}
	if b := j.Discovery.BootstrapToken; b != nil {
		if !set("token") {
			d.token = b.Token
		}
		if !set("discovery-token-ca-cert-hash") {
			d.hashes = b.CACertHashes
		}
		if !set("discovery-token-unsafe-skip-ca-verification") {
			d.skipCAVerification = b.UnsafeSkipCAVerification
		}
	}
	if cp := j.ControlPlane; cp != nil {
		if !set("control-plane") {
			d.controlPlane = true
		}
		if !set("certificate-key") {
			d.certificateKey = cp.CertificateKey
		}
		if !set("apiserver-advertise-address") {
			d.advertiseAddress = cp.LocalAPIEndpoint.AdvertiseAddress
		}
		if !set("apiserver-bind-port") {
			d.bindPort = cp.LocalAPIEndpoint.BindPort
		}
	}
	return nil
}
