// Command flanneld is flannel's node agent built from flannel's Go packages
// with the Kubernetes subnet manager and the vxlan and host-gw backends only.
//
// Flannel's own main cannot be built here: it links every backend, its udp
// backend needs cgo on amd64 (the image is static, CGO_ENABLED=0) and its
// tencentvpc backend needs an SDK version the Go module proxy does not serve.
// This main keeps flannel's flag names and start-up order for what Trireme
// runs: --kube-subnet-mgr, --ip-masq, --iface, the healthz server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/flannel-io/flannel/pkg/backend"
	_ "github.com/flannel-io/flannel/pkg/backend/hostgw"
	_ "github.com/flannel-io/flannel/pkg/backend/vxlan"
	"github.com/flannel-io/flannel/pkg/ip"
	"github.com/flannel-io/flannel/pkg/ipmatch"
	"github.com/flannel-io/flannel/pkg/subnet"
	"github.com/flannel-io/flannel/pkg/subnet/kube"
	"github.com/flannel-io/flannel/pkg/trafficmngr"
	"github.com/flannel-io/flannel/pkg/trafficmngr/iptables"
	"github.com/flannel-io/flannel/pkg/trafficmngr/nftables"
	"github.com/joho/godotenv"
	"k8s.io/klog/v2"

	"trireme.dev/componentbase/memtrim"
)

// options are flanneld's flags, named as flannel's own.
type options struct {
	kubeSubnetMgr             bool
	kubeAPIURL                string
	kubeConfigFile            string
	kubeAnnotationPrefix      string
	ifaces                    []string
	publicIP                  string
	ipMasq                    bool
	ipMasqRandomFullyDisable  bool
	subnetFile                string
	netConfPath               string
	healthzIP                 string
	healthzPort               int
	iptablesResync            int
	iptablesForwardRules      bool
	setNodeNetworkUnavailable bool
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var o options
	fs := flag.NewFlagSet("flanneld", flag.ExitOnError)
	fs.BoolVar(&o.kubeSubnetMgr, "kube-subnet-mgr", false, "take each node's subnet from its spec.podCIDR (required: the only subnet manager built in)")
	fs.StringVar(&o.kubeAPIURL, "kube-api-url", "", "API server URL; default in-cluster")
	fs.StringVar(&o.kubeConfigFile, "kubeconfig-file", "", "kubeconfig; default in-cluster")
	fs.StringVar(&o.kubeAnnotationPrefix, "kube-annotation-prefix", "flannel.alpha.coreos.com", "prefix of the node annotations flannel keeps its state in")
	fs.Var((*stringList)(&o.ifaces), "iface", "interface (name or IP) for traffic between nodes; repeatable, first match wins; default the default route's")
	fs.StringVar(&o.publicIP, "public-ip", "", "IP other nodes reach this one at; default the interface's")
	fs.BoolVar(&o.ipMasq, "ip-masq", false, "masquerade traffic from pods to outside the pod network")
	fs.BoolVar(&o.ipMasqRandomFullyDisable, "ip-masq-fully-random-disable", false, "masquerade without --random-fully")
	fs.StringVar(&o.subnetFile, "subnet-file", "/run/flannel/subnet.env", "where to write the node's subnet, network and MTU")
	fs.StringVar(&o.netConfPath, "net-config-path", "/etc/kube-flannel/net-conf.json", "the network configuration (net-conf.json)")
	fs.StringVar(&o.healthzIP, "healthz-ip", "0.0.0.0", "address of the /healthz and /readyz server")
	fs.IntVar(&o.healthzPort, "healthz-port", 0, "port of the /healthz and /readyz server; 0 for none")
	fs.IntVar(&o.iptablesResync, "iptables-resync", 5, "seconds between checks of the masquerade and forward rules")
	fs.BoolVar(&o.iptablesForwardRules, "iptables-forward-rules", true, "accept forwarded pod traffic in the FORWARD chain")
	fs.BoolVar(&o.setNodeNetworkUnavailable, "set-node-network-unavailable", true, "set the node's NetworkUnavailable condition to False once up")
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	fs.Var(klogFlags.Lookup("v").Value, "v", "log verbosity")
	_ = fs.Parse(os.Args[1:])

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// flanneld idles between lease and rule checks: its executable's
	// start-up pages and freed heap go back to the node.
	go memtrim.RunIdleTrimmer(ctx, klog.Background().WithName("memtrim"), memtrim.IdleInterval, memtrim.IdleAllocations)
	err := run(ctx, o)
	klog.Flush()
	if err != nil {
		fmt.Fprintln(os.Stderr, "flanneld:", err)
		os.Exit(1)
	}
}

// run brings the node's flannel network up and keeps it until ctx ends:
// subnet manager, backend, masquerade and forward rules, subnet file.
func run(ctx context.Context, o options) error {
	if !o.kubeSubnetMgr {
		return errors.New("--kube-subnet-mgr is required: this flanneld has no etcd subnet manager")
	}
	log := klog.Background()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: goroutines end with ctx

	var ready atomic.Bool
	if o.healthzPort > 0 {
		if err := serveHealthz(ctx, &wg, net.JoinHostPort(o.healthzIP, strconv.Itoa(o.healthzPort)), &ready); err != nil {
			return err
		}
	}

	sm, err := kube.NewSubnetManager(ctx, o.kubeAPIURL, o.kubeConfigFile, o.kubeAnnotationPrefix, o.netConfPath, o.setNodeNetworkUnavailable)
	if err != nil {
		return fmt.Errorf("kube subnet manager: %w", err)
	}
	config, err := networkConfig(ctx, sm)
	if err != nil {
		return err
	}
	ipStack, err := ipmatch.GetIPFamily(config.EnableIPv4, config.EnableIPv6)
	if err != nil {
		return fmt.Errorf("IP family: %w", err)
	}
	extIface, err := externalInterface(ctx, sm, o, ipStack)
	if err != nil {
		return err
	}
	log.Info("Using interface", "name", extIface.Iface.Name, "address", extIface.IfaceAddr, "backend", config.BackendType)

	be, err := backend.NewManager(ctx, sm, extIface).GetBackend(config.BackendType)
	if err != nil {
		return fmt.Errorf("backend %q: %w", config.BackendType, err)
	}
	bn, err := be.RegisterNetwork(ctx, &wg, config)
	if err != nil {
		return fmt.Errorf("register network with backend %q: %w", config.BackendType, err)
	}

	// Rules of the other netfilter front end (left by a run with the other
	// EnableNFTables setting) go first, as flannel's main does.
	if err := trafficManager(!config.EnableNFTables).CleanUp(ctx); err != nil {
		return fmt.Errorf("clean up unused traffic rules: %w", err)
	}
	tm := trafficManager(config.EnableNFTables)
	if err := tm.Init(ctx); err != nil {
		return fmt.Errorf("traffic manager: %w", err)
	}
	if o.ipMasq {
		// The previous run's network and subnet, from its subnet file, let the
		// manager replace rules that name an old range.
		prev := previousRanges(o.subnetFile)
		if err := tm.SetupAndEnsureMasqRules(ctx, config.Network, prev.subnet, prev.network,
			config.IPv6Network, prev.subnet6, prev.network6, bn.Lease(), o.iptablesResync, o.ipMasqRandomFullyDisable); err != nil {
			return fmt.Errorf("masquerade rules: %w", err)
		}
	}
	if o.iptablesForwardRules {
		tm.SetupAndEnsureForwardRules(ctx, config.Network, config.IPv6Network, o.iptablesResync)
	}

	if err := sm.HandleSubnetFile(o.subnetFile, config, o.ipMasq, bn.Lease().Subnet, bn.Lease().IPv6Subnet, bn.MTU()); err != nil {
		return fmt.Errorf("write subnet file %s: %w", o.subnetFile, err)
	}
	ready.Store(true)
	log.Info("Flannel is ready", "subnetFile", o.subnetFile, "subnet", bn.Lease().Subnet, "mtu", bn.MTU())

	wg.Add(1)
	go func() {
		defer wg.Done()
		bn.Run(ctx)
	}()
	if err := sm.CompleteLease(ctx, bn.Lease(), &wg); err != nil {
		return fmt.Errorf("complete lease: %w", err)
	}
	<-ctx.Done()
	log.Info("Stopping")
	return nil
}

// networkConfig waits for the network configuration.
func networkConfig(ctx context.Context, sm subnet.Manager) (*subnet.Config, error) {
	for {
		config, err := sm.GetNetworkConfig(ctx)
		if err == nil && config != nil {
			return config, nil
		}
		klog.Background().Error(err, "No network configuration yet")
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// externalInterface finds the interface other nodes reach this one through:
// the first of --iface that exists, else the one of the public IP (given, or
// annotated on the node by an earlier run), else the default route's.
func externalInterface(ctx context.Context, sm subnet.Manager, o options, ipStack int) (*backend.ExternalInterface, error) {
	publicIP, publicIPv6 := o.publicIP, ""
	if a, a6 := sm.GetStoredPublicIP(ctx); a != "" || a6 != "" {
		publicIP, publicIPv6 = a, a6
	}
	pub := ipmatch.PublicIPOpts{PublicIP: publicIP, PublicIPv6: publicIPv6}
	if len(o.ifaces) == 0 {
		iface, err := ipmatch.LookupExtIface(publicIP, "", "", ipStack, pub)
		if err != nil {
			return nil, fmt.Errorf("find the interface to use: %w", err)
		}
		return iface, nil
	}
	var errs []error
	for _, name := range o.ifaces {
		iface, err := ipmatch.LookupExtIface(name, "", "", ipStack, pub)
		if err == nil {
			return iface, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return nil, fmt.Errorf("no interface of --iface found: %w", errors.Join(errs...))
}

func trafficManager(nft bool) trafficmngr.TrafficManager {
	if nft {
		return &nftables.NFTablesManager{}
	}
	return &iptables.IPTablesManager{}
}

// ranges are the network and node subnet an earlier run wrote to its subnet file.
type ranges struct {
	network, subnet   ip.IP4Net
	network6, subnet6 ip.IP6Net
}

// previousRanges reads the subnet file an earlier run left; zero ranges
// where there is none.
func previousRanges(path string) ranges {
	r := ranges{network6: ip.IP6Net{IP: ip.FromIP6(net.IPv6zero)}, subnet6: ip.IP6Net{IP: ip.FromIP6(net.IPv6zero)}}
	env, err := godotenv.Read(path)
	if err != nil {
		return r
	}
	v4 := func(key string) ip.IP4Net {
		if _, n, err := net.ParseCIDR(env[key]); err == nil && n.IP.To4() != nil {
			return ip.FromIPNet(n)
		}
		return ip.IP4Net{}
	}
	v6 := func(key string, zero ip.IP6Net) ip.IP6Net {
		if _, n, err := net.ParseCIDR(env[key]); err == nil && n.IP.To4() == nil {
			return ip.FromIP6Net(n)
		}
		return zero
	}
	r.network, r.subnet = v4("FLANNEL_NETWORK"), v4("FLANNEL_SUBNET")
	r.network6, r.subnet6 = v6("FLANNEL_IPV6_NETWORK", r.network6), v6("FLANNEL_IPV6_SUBNET", r.subnet6)
	return r
}

// serveHealthz answers /healthz while the process runs and /readyz once
// the subnet file is written.
func serveHealthz(ctx context.Context, wg *sync.WaitGroup, addr string, ready *atomic.Bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("healthz listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "flannel is not ready yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.Background().Error(err, "Healthz server stopped")
		}
	}()
	go func() {
		defer wg.Done()
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return nil
}
