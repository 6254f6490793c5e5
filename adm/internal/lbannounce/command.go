package lbannounce

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/adm/internal/vip"
	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/logging"
)

// DefaultLeasePrefix prefixes every node's Lease name.
const DefaultLeasePrefix = "trireme-lb"

// DefaultPort is the port of DefaultBindAddress: the control-plane
// manager's plus one, so that both run on a control-plane node.
const DefaultPort = vip.DefaultPort + 1

// DefaultBindAddress is where /healthz and /metrics are served: loopback,
// as the control-plane manager's, since both answer without authentication.
var DefaultBindAddress = net.JoinHostPort("127.0.0.1", strconv.Itoa(DefaultPort))

// options are the loadbalancer mode's command line.
type options struct {
	cfg                Config
	nodeIP, kubeconfig string
	bindAddress        string
	logging.Settings
}

func newOptions() *options {
	le := vip.DefaultLease()
	le.ResourceName = DefaultLeasePrefix
	// Every node renews a Lease of its own here, not three managers one:
	// the VIP's quicker timings would double the writes of a large cluster.
	le.LeaseDuration.Duration, le.RenewDeadline.Duration, le.RetryPeriod.Duration = 4*time.Second, 3*time.Second, time.Second
	return &options{cfg: Config{Lease: le, Announcements: 3}, bindAddress: DefaultBindAddress, Settings: logging.Defaults("json")}
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.cfg.NodeName, "node-name", o.cfg.NodeName, "This node's name (the DaemonSet passes spec.nodeName).")
	fs.StringVar(&o.nodeIP, "node-ip", o.nodeIP, "This node's address, to find the interface of addresses outside every interface's network.")
	fs.StringVar(&o.cfg.Interface, "interface", o.cfg.Interface, "The interface for every address; default the one whose network holds the address, else the one holding --node-ip.")
	fs.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "The kubeconfig; empty: the pod's service account.")
	leaderelection.AddFlags(fs, &o.cfg.Lease, "announcing (each node's Lease is <resource-name>-<node>)")
	fs.IntVar(&o.cfg.Announcements, "announcements", o.cfg.Announcements, "How many gratuitous ARPs, a second apart, a new holder of an address sends (then one every 30s).")
	fs.StringVar(&o.bindAddress, "bind-address", o.bindAddress, "Where to serve /healthz and /metrics over plain HTTP; empty: nowhere.")
	o.Settings.AddFlags(fs)
	_ = cobra.MarkFlagRequired(fs, "node-name")
}

// spec is the loadbalancer mode's command line.
var spec = command.Spec[*options]{
	Name:       "trireme-vip loadbalancer",
	Short:      "Announce the LoadBalancer Services' addresses this node owns (the DaemonSet mode)",
	NewOptions: newOptions,
	AddFlags:   (*options).addFlags,
	Logging:    func(o *options) logging.Settings { return o.Settings },
	// Give freed heap and start-up's pages of the executable back while
	// idle: a node agent's memory is paid on every node.
	TrimWhenIdle: true,
	Run:          run,
}

// Run parses args and announces until ctx ends.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

func run(ctx context.Context, o *options) error {
	log := logr.FromContextOrDiscard(ctx)
	cfg := o.cfg
	if err := errors.Join(leaderelection.Validate(cfg.Lease)...); err != nil {
		return err
	}
	if !*cfg.Lease.LeaderElect {
		return errors.New("--leader-elect=false: a node announces only while it holds its Lease")
	}
	if cfg.Interface == "" {
		ip := net.ParseIP(o.nodeIP)
		if ip == nil {
			return errors.New("set --interface, or --node-ip to find it")
		}
		iface, err := vip.InterfaceOf(ip)
		if err != nil {
			return err
		}
		cfg.NodeInterface = iface
	}
	cfg.Identity = cfg.NodeName + "_" + string(uuid.NewUUID())
	rc, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	rc.QPS, rc.Burst = 20, 40
	watch, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	// A stuck Lease request must not outlive the renew deadline.
	lrc := *rc
	lrc.Timeout = cfg.Lease.RenewDeadline.Duration
	lease, err := kubernetes.NewForConfig(&lrc)
	if err != nil {
		return err
	}
	log.Info("Starting", "node", cfg.NodeName, "interface", cfg.Interface, "nodeInterface", cfg.NodeInterface,
		"lease", cfg.Lease.ResourceNamespace+"/"+LeaseName(cfg.Lease.ResourceName, cfg.NodeName), "apiserver", rc.Host)
	a := New(cfg, Clients{Lease: lease, Watch: watch}, vip.Linux{}, log)
	if o.bindAddress != "" {
		// Announcing matters more than reporting on it.
		if err := vip.Serve(ctx, o.bindAddress, a.Handler(), log); err != nil {
			log.Error(err, "Continuing without /healthz and /metrics")
		}
	}
	return a.Run(ctx)
}
