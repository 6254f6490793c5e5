// Package app is trireme-proxy's command line: flags and the --config
// file into options, then the proxier (or --cleanup), run until a signal.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/version"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"

	"trireme.dev/api/config/kubeproxy"
	"trireme.dev/componentbase/clientconn"
	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/logging"
	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/conntrack"
	"trireme.dev/proxy/internal/healthcheck"
	"trireme.dev/proxy/internal/iptables"
	"trireme.dev/proxy/internal/metrics"
	"trireme.dev/proxy/internal/model"
	"trireme.dev/proxy/internal/nftables"
	"trireme.dev/proxy/internal/options"
	"trireme.dev/proxy/internal/proxier"
)

// spec is the command line: upstream kube-proxy's flags over the --config
// KubeProxyConfiguration.
var spec = command.Spec[*options.Options]{
	Name:       "trireme-proxy",
	Short:      "Program the node's nftables or iptables so that Services reach their endpoints",
	NewOptions: func() *options.Options { return options.New(nil) },
	AddFlags:   (*options.Options).AddFlags,
	ConfigFile: func(o *options.Options) string { return o.ConfigFile },
	LoadConfig: command.LoadConfigWith(options.LoadConfig, options.New),
	Complete:   func(o *options.Options) error { o.Apply(); return nil },
	Validate:   (*options.Options).Validate,
	Logging:    func(o *options.Options) logging.Settings { return o.Settings },
	Run:        run,
}

// Run parses args and runs the proxy until ctx ends. Tests call it
// directly.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

func family(cfg string) model.Family {
	first, _, _ := strings.Cut(cfg, ",")
	if p, err := netip.ParsePrefix(strings.TrimSpace(first)); err == nil && p.Addr().Is6() {
		return model.IPv6
	}
	return model.IPv4
}

// families returns the IP families to serve, the primary first: both when
// clusterCIDR holds a CIDR of each family or the node has addresses of
// both (as upstream kube-proxy runs dual-stack), else the family of the
// first clusterCIDR entry, IPv4 without one. The primary is that of the
// first clusterCIDR entry, or of the first node address when clusterCIDR
// is empty.
func families(clusterCIDR string, nodeIPs []netip.Addr) []model.Family {
	has := map[model.Family]bool{}
	var order []model.Family
	add := func(f model.Family) {
		if !has[f] {
			has[f] = true
			order = append(order, f)
		}
	}
	for _, s := range strings.Split(clusterCIDR, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil {
			add(familyOf(p.Addr()))
		}
	}
	fromCIDR := len(order)
	for _, ip := range nodeIPs {
		add(familyOf(ip))
	}
	if len(order) == 2 {
		return order
	}
	if fromCIDR == 0 && len(order) == 1 {
		return order
	}
	return []model.Family{family(clusterCIDR)}
}

func familyOf(a netip.Addr) model.Family {
	if a.Unmap().Is4() {
		return model.IPv4
	}
	return model.IPv6
}

// clusterCIDRs returns clusterCIDR's (last) CIDR of family f, or the zero
// Prefix.
func clusterCIDRs(clusterCIDR string, f model.Family) netip.Prefix {
	var out netip.Prefix
	for _, s := range strings.Split(clusterCIDR, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil && familyOf(p.Addr()) == f {
			out = p.Masked()
		}
	}
	return out
}

// nodeAddresses returns the InternalIPs (or, without any, ExternalIPs)
// of the Node, or none when it cannot be read in a few seconds: the
// families then follow clusterCIDR alone.
func nodeAddresses(ctx context.Context, client kubernetes.Interface, name string) []netip.Addr {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		logr.FromContextOrDiscard(ctx).Info("Cannot read the Node for its IP families; using clusterCIDR's", "node", name, "err", err.Error())
		return nil
	}
	var internal, external []netip.Addr
	for _, a := range node.Status.Addresses {
		ip, err := netip.ParseAddr(a.Address)
		if err != nil {
			continue
		}
		switch a.Type {
		case v1.NodeInternalIP:
			internal = append(internal, ip)
		case v1.NodeExternalIP:
			external = append(external, ip)
		}
	}
	if len(internal) > 0 {
		return internal
	}
	return external
}

func run(ctx context.Context, o *options.Options) error {
	log := logr.FromContextOrDiscard(ctx)
	c := o.Config
	masqBit, syncPeriod, minSync := kubeproxy.ActiveSync(c)

	if o.Cleanup {
		return cleanup(ctx, families(c.ClusterCIDR, nil))
	}

	mode := c.Mode
	if mode == kubeproxy.ModeDefault {
		mode = kubeproxy.ModeIPTables
	}

	nodeName, err := o.NodeName()
	if err != nil {
		return err
	}
	restCfg, err := clientconn.Config(o.Master, o.Kubeconfig, c.ClientConnection)
	if err != nil {
		return err
	}
	restCfg.UserAgent = "trireme-proxy/" + version.Get().GitVersion
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}

	fams := families(c.ClusterCIDR, nodeAddresses(ctx, client, nodeName))
	bes := backends(c, mode, fams, masqBit)
	var healthNames, famNames []string
	for _, fam := range fams {
		famNames = append(famNames, fam.String())
		if len(fams) > 1 {
			healthNames = append(healthNames, fam.String())
		}
	}

	// Events on skipped objects, through an events/v1 broadcaster as
	// upstream kube-proxy records them.
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("event broadcaster: %w", err)
	}
	defer broadcaster.Shutdown()
	pcfg := proxier.Config{
		NodeName: nodeName, Family: fams[0], MinSyncPeriod: minSync, SyncPeriod: syncPeriod,
		ResyncPeriod: c.ConfigSyncPeriod.Duration, Conntrack: conntrack.Exec,
		Recorder: broadcaster.NewRecorder(scheme.Scheme, "trireme-proxy"),
	}
	pcfg.NodePortPrimary, pcfg.NodePortCIDRs = nodePortAddresses(c.NodePortAddresses)
	m := metrics.New()
	health := healthcheck.NewProxyHealth(2*syncPeriod, healthNames...)
	services := &healthcheck.Services{Log: log.WithName("healthcheck")}
	if c.BindAddress != "0.0.0.0" && c.BindAddress != "::" {
		services.Host = c.BindAddress
	}

	serveErr := make(chan error, 2)
	if err := serveEndpoints(ctx, c, health, m, serveErr); err != nil {
		return err
	}
	log.Info("Proxying Services", "mode", mode, "node", nodeName,
		"families", famNames, "clusterCIDR", c.ClusterCIDR, "minSyncPeriod", minSync, "syncPeriod", syncPeriod)
	p := proxier.NewDualStack(pcfg, client, bes, health, services, m)
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	select {
	case err := <-runErr:
		return err
	case err := <-serveErr:
		return err
	}
}

// backends makes one back end of the mode per IP family.
func backends(c *kubeproxyv1alpha1.KubeProxyConfiguration, mode kubeproxyv1alpha1.ProxyMode, fams []model.Family, masqBit int32) []proxier.Backend {
	var bes []proxier.Backend
	for _, fam := range fams {
		clusterCIDR := clusterCIDRs(c.ClusterCIDR, fam)
		var be backend.Interface
		switch mode {
		case kubeproxy.ModeNFTables:
			ncfg := nftables.Config{Family: fam, ClusterCIDR: clusterCIDR, MasqueradeAll: c.NFTables.MasqueradeAll, MasqueradeBit: int(masqBit)}
			be = nftables.New(ncfg, nftables.NewNetlink(ncfg))
		default:
			be = iptables.New(iptables.Config{Family: fam, ClusterCIDR: clusterCIDR, MasqueradeAll: c.IPTables.MasqueradeAll, MasqueradeBit: int(masqBit)},
				iptables.Commands{IPv6: fam == model.IPv6})
		}
		bes = append(bes, proxier.Backend{Family: fam, Backend: be})
	}
	return bes
}

// nodePortAddresses reads --nodeport-addresses: "primary" or CIDRs
// (entries that parse as neither were refused by validation).
func nodePortAddresses(addrs []string) (primary bool, cidrs []netip.Prefix) {
	for _, a := range addrs {
		if a == kubeproxy.NodePortAddressesPrimary {
			primary = true
		} else if p, err := netip.ParsePrefix(a); err == nil {
			cidrs = append(cidrs, p.Masked())
		}
	}
	return primary, cidrs
}

// serveEndpoints serves /healthz and /metrics on their addresses, when
// set; a server that stops reports on errs.
func serveEndpoints(ctx context.Context, c *kubeproxyv1alpha1.KubeProxyConfiguration, health *healthcheck.ProxyHealth, m *metrics.Metrics, errs chan<- error) error {
	if c.HealthzBindAddress != "" {
		if err := serve(ctx, c.HealthzBindAddress, health.Mux(), errs); err != nil {
			return err
		}
	}
	if c.MetricsBindAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
		mux.Handle("/healthz", health)
		if err := serve(ctx, c.MetricsBindAddress, mux, errs); err != nil {
			return err
		}
	}
	return nil
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
// does; a mode whose tools are missing has nothing to remove. The families
// of clusterCIDR must be cleaned; the other family (which a proxy made
// dual-stack by its node's addresses also wrote) is cleaned too, its
// failures only logged, since a node may have no IPv6 at all.
func cleanup(ctx context.Context, fams []model.Family) error {
	log := logr.FromContextOrDiscard(ctx)
	var errs []error
	for _, fam := range []model.Family{model.IPv4, model.IPv6} {
		var ferrs []error
		ncfg := nftables.Config{Family: fam}
		if err := nftables.New(ncfg, nftables.NewNetlink(ncfg)).Cleanup(ctx); err != nil {
			ferrs = append(ferrs, err)
		}
		if err := iptables.New(iptables.Config{Family: fam}, iptables.Commands{IPv6: fam == model.IPv6}).Cleanup(ctx); err != nil {
			ferrs = append(ferrs, err)
		}
		if slices.Contains(fams, fam) {
			errs = append(errs, ferrs...)
		} else if len(ferrs) > 0 {
			log.Info("Could not clean the family clusterCIDR does not name", "family", fam, "err", errors.Join(ferrs...).Error())
		}
	}
	if len(errs) == 0 {
		log.Info("Removed every rule of trireme-proxy")
	}
	return errors.Join(errs...)
}
