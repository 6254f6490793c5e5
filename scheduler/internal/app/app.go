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
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"

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

	if !*le.LeaderElect {
		metrics.Leader.Set(1)
		sched.Run(ctx)
		return nil
	}
	return lead(ctx, restCfg, le, watchdog, sched.Run)
}

// lead runs work while this process holds the Lease. It returns
// leaderelection.ErrLeadershipLost when another process took it.
func lead(ctx context.Context, restCfg *rest.Config, le componentbaseconfigv1alpha1.LeaderElectionConfiguration, watchdog *clientleaderelection.HealthzAdaptor, work func(context.Context)) error {
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(restCfg), UserAgent+"/leader-election"))
	if err != nil {
		return fmt.Errorf("leader election client: %w", err)
	}
	id, err := leaderelection.Identity()
	if err != nil {
		return err
	}
	return leaderelection.Run(ctx, leaderelection.Config{
		Lease: le, Identity: id, Client: client, Watchdog: watchdog,
		Leading: func(on bool) {
			if on {
				metrics.Leader.Set(1)
			} else {
				metrics.Leader.Set(0)
			}
		},
	}, func(ctx context.Context) error {
		work(ctx)
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
