// Package app is trireme-proxy's command line: flags and the --config
// file into options, then the proxier (or --cleanup), run until a signal.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/version"

	"trireme.dev/api/config/kubeproxy"
	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/conntrack"
	"trireme.dev/proxy/internal/healthcheck"
	"trireme.dev/proxy/internal/iptables"
	"trireme.dev/proxy/internal/logging"
	"trireme.dev/proxy/internal/metrics"
	"trireme.dev/proxy/internal/model"
	"trireme.dev/proxy/internal/nftables"
	"trireme.dev/proxy/internal/options"
	"trireme.dev/proxy/internal/proxier"
)

// Main runs the command with args and returns the exit code.
func Main(ctx context.Context, args []string) int {
	if err := Run(ctx, args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}

// Run parses args and runs the proxy until ctx ends. Tests call it
// directly.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	o := options.New(nil)
	var showVersion bool
	cmd := &cobra.Command{
		Use:           "trireme-proxy",
		Short:         "Program the node's nftables or iptables so that Services reach their endpoints",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				fmt.Fprintln(cmd.OutOrStdout(), version.Get().GitVersion)
				return nil
			}
			final, err := withConfigFile(o, args)
			if err != nil {
				return err
			}
			final.Apply()
			return run(ctx, final)
		},
	}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	bindFlags(cmd.Flags(), o, &showVersion)
	return cmd.Execute()
}

func bindFlags(fs *pflag.FlagSet, o *options.Options, showVersion *bool) {
	o.AddFlags(fs)
	fs.BoolVar(showVersion, "version", false, "Print the version and exit.")
}

// withConfigFile loads --config, when given, and parses args again over
// it, so that flags on the command line win over the file.
func withConfigFile(o *options.Options, args []string) (*options.Options, error) {
	if o.ConfigFile == "" {
		return o, nil
	}
	cfg, err := options.LoadConfig(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	final := options.New(cfg)
	fs := pflag.NewFlagSet("trireme-proxy", pflag.ContinueOnError)
	var ignored bool
	bindFlags(fs, final, &ignored)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("parse flags over --config: %w", err)
	}
	return final, nil
}

func family(cfg string) model.Family {
	first, _, _ := strings.Cut(cfg, ",")
	if p, err := netip.ParsePrefix(strings.TrimSpace(first)); err == nil && p.Addr().Is6() {
		return model.IPv6
	}
	return model.IPv4
}

func run(ctx context.Context, o *options.Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	log, flush, err := logging.New(o.LogFormat, o.Verbosity)
	if err != nil {
		return err
	}
	defer flush()
	ctx = logr.NewContext(ctx, log)
	c := o.Config
	fam := family(c.ClusterCIDR)
	masqBit, syncPeriod, minSync := kubeproxy.ActiveSync(c)
	var clusterCIDR netip.Prefix
	if c.ClusterCIDR != "" {
		for _, s := range strings.Split(c.ClusterCIDR, ",") {
			if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil && p.Addr().Is6() == (fam == model.IPv6) {
				clusterCIDR = p.Masked()
			}
		}
	}

	if o.Cleanup {
		return cleanup(ctx, fam)
	}

	mode := c.Mode
	if mode == kubeproxy.ModeDefault {
		mode = kubeproxy.ModeIPTables
	}
	var be backend.Interface
	switch mode {
	case kubeproxy.ModeNFTables:
		ncfg := nftables.Config{Family: fam, ClusterCIDR: clusterCIDR, MasqueradeAll: c.NFTables.MasqueradeAll, MasqueradeBit: int(masqBit)}
		be = nftables.New(ncfg, nftables.NewNetlink(ncfg))
	default:
		be = iptables.New(iptables.Config{Family: fam, ClusterCIDR: clusterCIDR, MasqueradeAll: c.IPTables.MasqueradeAll, MasqueradeBit: int(masqBit)},
			iptables.Commands{IPv6: fam == model.IPv6})
	}

	nodeName, err := o.NodeName()
	if err != nil {
		return err
	}
	restCfg, err := clientcmd.BuildConfigFromFlags(o.Master, o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	restCfg.QPS, restCfg.Burst = c.ClientConnection.QPS, int(c.ClientConnection.Burst)
	restCfg.ContentType = c.ClientConnection.ContentType
	restCfg.UserAgent = "trireme-proxy/" + version.Get().GitVersion
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}

	// Events on skipped objects, through an events/v1 broadcaster as
	// upstream kube-proxy records them.
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("event broadcaster: %w", err)
	}
	defer broadcaster.Shutdown()
	pcfg := proxier.Config{
		NodeName: nodeName, Family: fam, MinSyncPeriod: minSync, SyncPeriod: syncPeriod,
		ResyncPeriod: c.ConfigSyncPeriod.Duration, Conntrack: conntrack.Exec,
		Recorder: broadcaster.NewRecorder(scheme.Scheme, "trireme-proxy"),
	}
	for _, a := range c.NodePortAddresses {
		if a == kubeproxy.NodePortAddressesPrimary {
			pcfg.NodePortPrimary = true
		} else if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is6() == (fam == model.IPv6) {
			pcfg.NodePortCIDRs = append(pcfg.NodePortCIDRs, p.Masked())
		}
	}
	m := metrics.New()
	health := healthcheck.NewProxyHealth(2 * syncPeriod)
	services := &healthcheck.Services{Log: log.WithName("healthcheck")}
	if c.BindAddress != "0.0.0.0" && c.BindAddress != "::" {
		services.Host = c.BindAddress
	}

	serveErr := make(chan error, 2)
	if c.HealthzBindAddress != "" {
		if err := serve(ctx, c.HealthzBindAddress, health.Mux(), serveErr); err != nil {
			return err
		}
	}
	if c.MetricsBindAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
		mux.Handle("/healthz", health)
		if err := serve(ctx, c.MetricsBindAddress, mux, serveErr); err != nil {
			return err
		}
	}
	log.Info("Starting trireme-proxy", "version", version.Get().GitVersion, "mode", mode, "node", nodeName,
		"clusterCIDR", clusterCIDR, "minSyncPeriod", minSync, "syncPeriod", syncPeriod)
	p := proxier.New(pcfg, client, be, health, services, m)
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	select {
	case err := <-runErr:
		return err
	case err := <-serveErr:
		return err
	}
}

// serve listens on addr and serves h until ctx ends.
func serve(ctx context.Context, addr string, h http.Handler, errs chan<- error) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("serve %s: %w", addr, err)
		}
	}()
	return nil
}

// cleanup removes what either mode installed, as kube-proxy --cleanup
// does; a mode whose tools are missing has nothing to remove.
func cleanup(ctx context.Context, fam model.Family) error {
	log := logr.FromContextOrDiscard(ctx)
	var errs []error
	ncfg := nftables.Config{Family: fam}
	if err := nftables.New(ncfg, nftables.NewNetlink(ncfg)).Cleanup(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := iptables.New(iptables.Config{Family: fam}, iptables.Commands{IPv6: fam == model.IPv6}).Cleanup(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		log.Info("Removed every rule of trireme-proxy")
	}
	return errors.Join(errs...)
}
