package vip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/zapr"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// NewCommand is trireme-vip's command line.
func NewCommand() *cobra.Command {
	var (
		cfg             Config
		vip, nodeIP, kc string
		bindAddress     string
		verbosity       int
	)
	cmd := &cobra.Command{
		Use:          "trireme-vip",
		Short:        "Hold the control plane's virtual IP on this node while it holds the kube-system Lease",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			zc := zap.NewProductionConfig()
			zc.Sampling = nil
			zc.Level = zap.NewAtomicLevelAt(zapcore.Level(-verbosity))
			zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
			z, err := zc.Build()
			if err != nil {
				return err
			}
			defer func() { _ = z.Sync() }()
			log := zapr.NewLogger(z)
			klog.SetLogger(log)
			if cfg.VIP = net.ParseIP(vip).To4(); cfg.VIP == nil {
				return fmt.Errorf("--vip %q is not an IPv4 address", vip)
			}
			if cfg.Interface == "" {
				ip := net.ParseIP(nodeIP)
				if ip == nil {
					return errors.New("set --interface, or --node-ip to find it")
				}
				if cfg.Interface, err = InterfaceOf(ip); err != nil {
					return err
				}
			}
			rc, err := clientcmd.BuildConfigFromFlags("", kc)
			if err != nil {
				return fmt.Errorf("--kubeconfig: %w", err)
			}
			// A stuck request must not outlive the renew deadline.
			rc.Timeout = cfg.RenewDeadline
			c, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return err
			}
			log.Info("Starting", "vip", cfg.VIP, "interface", cfg.Interface, "identity", cfg.Identity, "apiserver", rc.Host)
			m := New(cfg, c, Linux{}, log)
			if bindAddress != "" {
				// Holding the address matters more than reporting on it.
				if err := m.Serve(cmd.Context(), bindAddress); err != nil {
					log.Error(err, "Continuing without /healthz and /metrics")
				}
			}
			return m.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&vip, "vip", "", "The virtual IP.")
	fs.StringVar(&cfg.Interface, "interface", "", "The interface to put it on; default the one holding --node-ip.")
	fs.StringVar(&nodeIP, "node-ip", "", "This node's address, to find the interface.")
	fs.StringVar(&cfg.Identity, "id", "", "This manager's identity in the Lease (the node name).")
	fs.StringVar(&kc, "kubeconfig", "", "The kubeconfig of this node's own apiserver.")
	fs.StringVar(&cfg.LeaseName, "lease-name", DefaultLeaseName, "The Lease in kube-system.")
	fs.DurationVar(&cfg.LeaseDuration, "lease-duration", 4*time.Second, "How long a lease lasts without renewal.")
	fs.DurationVar(&cfg.RenewDeadline, "renew-deadline", 3*time.Second, "How long the holder retries renewing before it lets go.")
	fs.DurationVar(&cfg.RetryPeriod, "retry-period", time.Second, "How often the managers try to take or renew the lease.")
	fs.IntVar(&cfg.Announcements, "announcements", 3, "How many gratuitous ARPs, a second apart, a new holder sends (then one every 30s).")
	fs.StringVar(&bindAddress, "bind-address", DefaultBindAddress, "Where to serve /healthz and /metrics over plain HTTP; empty: nowhere.")
	fs.IntVarP(&verbosity, "v", "v", 0, "Log verbosity.")
	_ = cmd.MarkFlagRequired("vip")
	_ = cmd.MarkFlagRequired("id")
	_ = cmd.MarkFlagRequired("kubeconfig")
	return cmd
}

// Main runs the command until ctx ends.
func Main(ctx context.Context) error { return NewCommand().ExecuteContext(ctx) }
