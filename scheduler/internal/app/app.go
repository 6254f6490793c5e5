// Package app is trireme-scheduler's command line: flags and the --config
// file into options, then the scheduler (behind leader election), run
// until a signal.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"trireme.dev/api/config/kubescheduler"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/memtrim"
	"trireme.dev/scheduler/internal/metrics"
	"trireme.dev/scheduler/internal/options"
	"trireme.dev/scheduler/internal/plugins"
	"trireme.dev/scheduler/internal/scheduler"
	"trireme.dev/scheduler/internal/serving"
)

// UserAgent names the scheduler to the apiserver.
const UserAgent = "trireme-scheduler"

// ErrLeadershipLost is returned by Run when another process took the Lease.
var ErrLeadershipLost = errors.New("leader election lost")

// Main runs the command with args and returns the exit code.
func Main(args []string) int {
	if err := Run(genericapiserver.SetupSignalContext(), args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}

// Run parses args and runs the scheduler until ctx ends. Tests call it
// directly.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	o := options.New(nil)
	var showVersion bool
	cmd := &cobra.Command{
		Use:           "trireme-scheduler",
		Short:         "Place pending pods on nodes, with kube-scheduler's plugins and configuration",
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
	cfg, err := kubescheduler.LoadFile(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	final := options.New(cfg)
	fs := pflag.NewFlagSet("trireme-scheduler", pflag.ContinueOnError)
	var ignored bool
	bindFlags(fs, final, &ignored)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("parse flags over --config: %w", err)
	}
	return final, nil
}

func run(ctx context.Context, o *options.Options) error {
	if errs := o.Validate(); len(errs) > 0 {
		return errors.Join(errs...)
	}
	log, flush, err := logging.New(o.LogFormat, o.Verbosity)
	if err != nil {
		return err
	}
	defer flush()
	ctx = logr.NewContext(ctx, log)
	log.Info("Starting trireme-scheduler", "version", version.Get().GitVersion)
	// Start-up runs the init code of every API group once; give those
	// pages of the executable, and freed heap, back while idle.
	go memtrim.RunIdleTrimmer(ctx, log, memtrim.IdleInterval, memtrim.IdleAllocations)

	restCfg, err := clientConfig(o.Config)
	if err != nil {
		return err
	}
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
	var checks []healthz.HealthChecker
	var watchdog *leaderelection.HealthzAdaptor
	if *le.LeaderElect {
		watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
		checks = append(checks, watchdog)
	}
	addr, err := serving.Start(ctx, o.SecureServing, o.Authentication, o.Authorization, serving.Handler(serving.Debugging{
		Profiling:           *o.Config.EnableProfiling,
		ContentionProfiling: *o.Config.EnableContentionProfiling,
	}, ready, checks...))
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

// lead runs work while this process holds the Lease.
func lead(ctx context.Context, restCfg *rest.Config, le componentbaseconfigv1alpha1.LeaderElectionConfiguration, watchdog *leaderelection.HealthzAdaptor, work func(context.Context)) error {
	log := klog.FromContext(ctx)
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(restCfg), UserAgent+"/leader-election"))
	if err != nil {
		return fmt.Errorf("leader election client: %w", err)
	}
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("leader election identity: %w", err)
	}
	id := fmt.Sprintf("%s_%d_%d", host, os.Getpid(), time.Now().UnixNano())
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.ResourceNamespace, Name: le.ResourceName},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	lost := false
	done := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Name:            le.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				defer close(done)
				log.Info("Leading", "lease", le.ResourceNamespace+"/"+le.ResourceName, "identity", id)
				metrics.Leader.Set(1)
				work(ctx)
			},
			OnStoppedLeading: func() {
				metrics.Leader.Set(0)
				if ctx.Err() == nil {
					lost = true
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	log.Info("Waiting for the leader election Lease", "lease", le.ResourceNamespace+"/"+le.ResourceName, "identity", id)
	elector.Run(ctx)
	select {
	case <-done:
	default:
	}
	if lost {
		return ErrLeadershipLost
	}
	return nil
}

func clientConfig(cfg *configv1.KubeSchedulerConfiguration) (*rest.Config, error) {
	cc := cfg.ClientConnection
	var restCfg *rest.Config
	var err error
	if cc.Kubeconfig == "" {
		restCfg, err = rest.InClusterConfig()
	} else {
		restCfg, err = clientcmd.BuildConfigFromFlags("", cc.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("client configuration: %w", err)
	}
	restCfg.QPS = cc.QPS
	restCfg.Burst = int(cc.Burst)
	restCfg.ContentType = cc.ContentType
	if cc.ContentType != "" && cc.ContentType != "application/json" {
		restCfg.AcceptContentTypes = cc.ContentType + ",application/json"
	}
	return rest.AddUserAgent(restCfg, UserAgent), nil
}

// dropManagedFields keeps informer caches small: the scheduler never
// reads managedFields.
func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
		m.GetObjectMeta().SetManagedFields(nil)
	}
	return obj, nil
}
