package vip

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/logging"
)

// options are trireme-vip's command line.
type options struct {
	cfg                     Config
	vip, nodeIP, kubeconfig string
	bindAddress             string
	logging.Settings
}

// DefaultLease is the election the managers take part in: much quicker
// than the controllers' (15s) because the whole control plane is
// unreachable through the address while no one holds it. A candidate takes
// a dead holder's Lease between one and two retry periods (client-go's
// jitter) after it expires, counted from when the candidate last saw it
// renewed: 2.5-5.2 s after the holder's last renewal with these, where 4 s
// and 1 s gave 3-8.4 s (4.7-6.5 s measured when a holder's node stopped).
func DefaultLease() componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:       ptr.To(true),
		ResourceLock:      "leases",
		ResourceName:      DefaultLeaseName,
		ResourceNamespace: metav1.NamespaceSystem,
		LeaseDuration:     metav1.Duration{Duration: 3 * time.Second},
		RenewDeadline:     metav1.Duration{Duration: 2 * time.Second},
		RetryPeriod:       metav1.Duration{Duration: 500 * time.Millisecond},
	}
}

func newOptions() *options {
	return &options{cfg: Config{Lease: DefaultLease()}, bindAddress: DefaultBindAddress, Settings: logging.Defaults("json")}
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.vip, "vip", o.vip, "The virtual IP.")
	fs.StringVar(&o.cfg.Interface, "interface", o.cfg.Interface, "The interface to put it on; default the one holding --node-ip.")
	fs.StringVar(&o.nodeIP, "node-ip", o.nodeIP, "This node's address, to find the interface.")
	fs.StringVar(&o.cfg.Identity, "id", o.cfg.Identity, "This manager's identity in the Lease (the node name).")
	fs.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "The kubeconfig of this node's own apiserver.")
	leaderelection.AddFlags(fs, &o.cfg.Lease, "holding the address")
	fs.IntVar(&o.cfg.Announcements, "announcements", 3, "How many gratuitous ARPs, a second apart, a new holder sends (then one every 30s).")
	fs.StringVar(&o.bindAddress, "bind-address", o.bindAddress, "Where to serve /healthz and /metrics over plain HTTP; empty: nowhere.")
	o.Settings.AddFlags(fs)
	for _, name := range []string{"vip", "id", "kubeconfig"} {
		_ = cobra.MarkFlagRequired(fs, name)
	}
}

// spec is trireme-vip's command line.
var spec = command.Spec[*options]{
	Name:       "trireme-vip",
	Short:      "Hold the control plane's virtual IP on this node while it holds the kube-system Lease (trireme-vip loadbalancer: the DaemonSet mode, announcing LoadBalancer addresses)",
	NewOptions: newOptions,
	AddFlags:   (*options).addFlags,
	Logging:    func(o *options) logging.Settings { return o.Settings },
	Run:        run,
}

// Run parses args and runs the manager until ctx ends.
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
		return errors.New("--leader-elect=false: the manager holds the address only while it leads")
	}
	if cfg.VIP = net.ParseIP(o.vip).To4(); cfg.VIP == nil {
		return fmt.Errorf("--vip %q is not an IPv4 address", o.vip)
	}
	if cfg.Interface == "" {
		ip := net.ParseIP(o.nodeIP)
		if ip == nil {
			return errors.New("set --interface, or --node-ip to find it")
		}
		iface, err := InterfaceOf(ip)
		if err != nil {
			return err
		}
		cfg.Interface = iface
	}
	rc, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	// A stuck request must not outlive the renew deadline.
	rc.Timeout = cfg.Lease.RenewDeadline.Duration
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	log.Info("Starting", "vip", cfg.VIP, "interface", cfg.Interface, "identity", cfg.Identity, "apiserver", rc.Host)
	cfg.ShuttingDown = APIServerShuttingDown(c)
	m := New(cfg, c, Linux{}, log)
	if o.bindAddress != "" {
		// Holding the address matters more than reporting on it.
		if err := m.Serve(ctx, o.bindAddress); err != nil {
			log.Error(err, "Continuing without /healthz and /metrics")
		}
	}
	return m.Run(ctx)
}

// APIServerShuttingDown asks the apiserver c reaches whether it is shutting
// down: its readyz check "shutdown" fails from SIGTERM on. Every
// authenticated identity may read /readyz, not its single checks.
func APIServerShuttingDown(c kubernetes.Interface) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		body, err := c.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "1").DoRaw(ctx)
		if bytes.Contains(body, []byte("[-]shutdown ")) {
			return true, nil
		}
		return false, err
	}
}
