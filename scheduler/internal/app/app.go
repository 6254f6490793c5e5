// Package app is trireme-scheduler's command line: flags and the --config
// file into options, then the scheduler (behind leader election), run
// until a signal.
package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientleaderelection "k8s.io/client-go/tools/leaderelection"

	"trireme.dev/componentbase/clientconn"
	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/serving"
	"trireme.dev/scheduler/internal/metrics"
	"trireme.dev/scheduler/internal/options"
	"trireme.dev/scheduler/internal/plugins"
	"trireme.dev/scheduler/internal/scheduler"
)

// UserAgent names the scheduler to the apiserver.
const UserAgent = "trireme-scheduler"

// spec is the command line: upstream's flags over the --config
// KubeSchedulerConfiguration.
var spec = command.Spec[*options.Options]{
	Name:       "trireme-scheduler",
	Short:      "Place pending pods on nodes, with kube-scheduler's plugins and configuration",
	NewOptions: func() *options.Options { return options.New(nil) },
	AddFlags:   (*options.Options).AddFlags,
	ConfigFile: func(o *options.Options) string { return o.ConfigFile },
	LoadConfig: command.LoadConfigWith(options.LoadConfig, options.New),
	Validate:   (*options.Options).Validate,
	Logging:    func(o *options.Options) logging.Settings { return o.Settings },
	// Start-up runs the init code of every API group once; give those
	// pages of the executable, and freed heap, back while idle.
	TrimWhenIdle: true,
	Run:          run,
}

// Run parses args and runs the scheduler until ctx ends. Tests call it
// directly.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

func run(ctx context.Context, o *options.Options) error {
	log := logr.FromContextOrDiscard(ctx)

	restCfg, err := clientconn.Config("", o.Config.ClientConnection.Kubeconfig, o.Config.ClientConnection)
	if err != nil {
		return err
	}
	restCfg = rest.AddUserAgent(restCfg, UserAgent)
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(dropManagedFields))
	sched, err := scheduler.New(ctx, client, restCfg, factory, o.Config, plugins.Registry())
	if err != nil {
		return err
	}

	synced := make(chan struct{})
	ready := healthz.NamedCheck("sched-handler-sync", func(*http.Request) error {
		select {
		case <-synced:
			return nil
		default:
			return errors.New("waiting for informers to sync")
		}
	})
	le := o.Config.LeaderElection
	endpoints := serving.Endpoints{
		Metrics:             metrics.Registry,
		Ready:               []healthz.HealthChecker{ready},
		Profiling:           *o.Config.EnableProfiling,
		ContentionProfiling: *o.Config.EnableContentionProfiling,
	}
	var watchdog *clientleaderelection.HealthzAdaptor
	if *le.LeaderElect {
		watchdog = clientleaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
		endpoints.Live = append(endpoints.Live, watchdog)
	}
	addr, err := o.Start(ctx, serving.Handler(endpoints))
	if err != nil {
		return err
	}
	if addr != "" {
		log.Info("Serving health and metrics", "address", "https://"+addr)
	}

	// Informers start before leading, so that a replica taking over has a
	// warm cache.
	factory.Start(ctx.Done())
	if !sched.WaitForCacheSync(ctx) {
		return fmt.Errorf("informer caches did not sync: %w", context.Cause(ctx))
	}
	close(synced)
	log.Info("Caches synced", "nodes", sched.Cache.NodeCount(), "assignedPods", sched.Cache.PodCount())

	// It returns leaderelection.ErrLeadershipLost when another process
	// took the Lease.
	return leaderelection.Lead(ctx, restCfg, UserAgent, leaderelection.Config{
		Lease: le, Watchdog: watchdog, Leading: leaderelection.SetGauge(metrics.Leader),
	}, func(ctx context.Context) error {
		sched.Run(ctx)
		return nil
	})
}

// dropManagedFields keeps informer caches small: the scheduler never
// reads managedFields.
func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
		m.GetObjectMeta().SetManagedFields(nil)
	}
	return obj, nil
}
