// Package manager runs trireme-controller-manager: clients from the
// kubeconfig, the HTTPS health and metrics endpoint, leader election on a
// Lease, and the controllers while this process leads.
package manager

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	clientleaderelection "k8s.io/client-go/tools/leaderelection"
	certutil "k8s.io/client-go/util/cert"

	"trireme.dev/componentbase/clientconn"
	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/serving"
	"trireme.dev/controller-manager/internal/certexpiry"
	"trireme.dev/controller-manager/internal/clientbuilder"
	"trireme.dev/controller-manager/internal/controllers"
	"trireme.dev/controller-manager/internal/metrics"
	"trireme.dev/controller-manager/internal/options"
)

// Manager is a configured controller-manager.
type Manager struct {
	opts        *options.Options
	controllers []controllers.Descriptor
	rest        *rest.Config
	rootCA      []byte
	// Addr is the HTTPS address bound once Run has started serving; tests
	// read it after Ready is closed.
	Addr  string
	ready chan struct{}
}

// New checks o's client configuration and root CA, ready to Run the given
// controllers (controllers.All in production).
func New(o *options.Options, list []controllers.Descriptor) (*Manager, error) {
	cfg, err := clientconn.Config("", o.Config.Generic.ClientConnection.Kubeconfig, o.Config.Generic.ClientConnection)
	if err != nil {
		return nil, err
	}
	ca, err := rootCA(o.Config.SAController.RootCAFile, cfg)
	if err != nil {
		return nil, err
	}
	return &Manager{opts: o, controllers: list, rest: cfg, rootCA: ca, ready: make(chan struct{})}, nil
}

// Ready is closed once the HTTPS endpoint listens (or was turned off).
func (m *Manager) Ready() <-chan struct{} { return m.ready }

// Run serves health and metrics, then runs the controllers (after winning
// the Lease, with --leader-elect) until ctx ends. It returns nil after a
// clean stop, leaderelection.ErrLeadershipLost when the Lease was lost: the
// controllers have stopped and the process should exit so that it restarts
// as a fresh candidate, as upstream does.
func (m *Manager) Run(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx)
	le := m.opts.Config.Generic.LeaderElection
	endpoints := serving.Endpoints{Metrics: metrics.Registry}
	var watchdog *clientleaderelection.HealthzAdaptor
	if *le.LeaderElect {
		// A leader that has not renewed for this long is unhealthy.
		watchdog = clientleaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
		endpoints.Live = append(endpoints.Live, watchdog)
	}
	if p := m.opts.Config.Generic.Debugging.EnableProfiling; p != nil && *p {
		endpoints.Profiling = true
	}
	addr, err := m.opts.Start(ctx, serving.Handler(endpoints))
	if err != nil {
		return err
	}
	m.Addr = addr
	close(m.ready)
	if addr != "" {
		log.Info("Serving health and metrics", "address", addr)
	}
	if ce := m.opts.CertificateExpiry; ce.Dir != "" {
		client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(m.rest), clientbuilder.UserAgent+"/certificate-expiry"))
		if err != nil {
			return fmt.Errorf("certificate expiry client: %w", err)
		}
		w := &certexpiry.Watcher{Dir: ce.Dir, Node: ce.Node, Warn: time.Duration(ce.WarnDays) * 24 * time.Hour, Interval: time.Hour, Client: client}
		// Each replica warns of its own node's files, leader or not.
		go w.Run(ctx, log.WithName("certificate-expiry"))
	}
	return leaderelection.Lead(ctx, m.rest, clientbuilder.UserAgent, leaderelection.Config{
		Lease: le, Watchdog: watchdog, Leading: metrics.SetLeading,
	}, m.runControllers)
}

// runControllers builds the shared clients and informers and runs every
// enabled controller until ctx ends.
func (m *Manager) runControllers(ctx context.Context) error {
	generic := m.opts.Config.Generic
	root := clientbuilder.Simple{Root: m.rest}
	var builder clientbuilder.Builder = root
	if m.opts.Config.KubeCloudShared.UseServiceAccountCredentials {
		core, err := root.Client("tokens")
		if err != nil {
			return err
		}
		builder = clientbuilder.ServiceAccounts{Root: m.rest, Core: core, Namespace: "kube-system", Context: ctx}
	}
	// The shared informers watch for every controller at once, so they run
	// as the controller-manager itself, as upstream's do: no one controller's
	// role could read all they watch. Each controller writes with its own
	// identity from builder.
	client, err := root.Client("shared-informers")
	if err != nil {
		return err
	}
	metaCfg, err := root.Config("shared-informers")
	if err != nil {
		return err
	}
	metaClient, err := metadata.NewForConfig(metaCfg)
	if err != nil {
		return fmt.Errorf("metadata client: %w", err)
	}

	resync := resyncPeriod(generic.MinResyncPeriod.Duration)
	cc := &controllers.Context{
		Config:    m.opts.Config,
		Clients:   builder,
		Informers: informers.NewSharedInformerFactory(client, resync),
		Metadata:  metadatainformer.NewSharedInformerFactory(metaClient, resync),
		Resolver:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery())),
		Discovery: client.Discovery(),
		RootCA:    m.rootCA,
	}
	return controllers.Start(ctx, cc, m.controllers)
}

// resyncPeriod picks the informers' resync period at random between min and
// twice min, so that the managers of a cluster do not resync in step.
func resyncPeriod(min time.Duration) time.Duration {
	return min + time.Duration(rand.Int64N(int64(min)+1))
}

// rootCA reads the bundle the root CA publisher publishes: --root-ca-file,
// or else the certificate authority the kubeconfig trusts.
func rootCA(file string, cfg *rest.Config) ([]byte, error) {
	var (
		data []byte
		err  error
		from = file
	)
	switch {
	case file != "":
		data, err = os.ReadFile(file)
	case len(cfg.CAData) > 0:
		data, from = cfg.CAData, "kubeconfig certificate-authority-data"
	case cfg.CAFile != "":
		data, err = os.ReadFile(cfg.CAFile)
		from = cfg.CAFile
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("root CA: %w", err)
	}
	if _, err := certutil.ParseCertsPEM(data); err != nil {
		return nil, fmt.Errorf("root CA from %s: %w", from, err)
	}
	return data, nil
}
